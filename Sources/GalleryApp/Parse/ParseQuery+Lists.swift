extension ParseQuery {
    /// `["-createdAt","title"]` → `-createdAt,title`, and a JSON string `"title"` → `title` (Parse
    /// Server parses every parameter as JSON and joins an array with commas); any other text is
    /// already the comma list; nil for an empty array. An array holding anything but strings is 102.
    static func commaList(_ text: String, name: String) throws -> String? {
        guard let first = text.utf8.first(where: { $0 != UInt8(ascii: " ") }),
            first == UInt8(ascii: "[") || first == UInt8(ascii: "\"")
        else { return text }
        let json: ParseJSONValue
        do {
            json = try ParseJSONParser.parse(text, maxDepth: 2)
        } catch {
            throw ParseError.invalidQuery("\(name) must be a comma list or a JSON array of strings")
        }
        switch json {
        case .string(let single):
            return single
        case .array(let elements):
            var names: [String] = []
            for element in elements {
                guard case .string(let element) = element else {
                    throw ParseError.invalidQuery("\(name) must be a comma list or a JSON array of strings")
                }
                names.append(element)
            }
            return names.isEmpty ? nil : names.joined(separator: ",")
        default:
            throw ParseError.invalidQuery("\(name) must be a comma list or a JSON array of strings")
        }
    }
}
