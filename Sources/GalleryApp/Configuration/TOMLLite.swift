/// The small subset of TOML that galleryd's flat config file uses: `key = value` lines with
/// `"strings"` (basic escapes), integers (with `_` separators), booleans, `#` comments and blank lines.
/// No tables or arrays: every setting is a top-level key, as in the example file.
enum TOMLLite {
    /// The `(key, raw value, line number)` entries of a file, values unquoted and unescaped.
    static func parse(_ text: String, file: String) throws -> [(key: String, value: String, line: Int)] {
        var entries: [(key: String, value: String, line: Int)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let line = rawLine.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\r"])
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") {
                throw ConfigurationError.syntax(file: file, line: lineNumber, reason: "tables are not used; write top-level keys")
            }
            guard let eq = line.firstIndex(of: "=") else {
                throw ConfigurationError.syntax(file: file, line: lineNumber, reason: "expected key = value")
            }
            let key = line[..<eq].trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else {
                throw ConfigurationError.syntax(file: file, line: lineNumber, reason: "invalid key \"\(key)\"")
            }
            let rest = line[line.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            let value: String
            if rest.hasPrefix("\"") {
                value = try unquote(rest, file: file, line: lineNumber)
            } else {
                let bare = rest.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                value = bare.trimmingCharacters(in: .whitespaces)
                guard !value.isEmpty else {
                    throw ConfigurationError.syntax(file: file, line: lineNumber, reason: "missing value for \(key)")
                }
            }
            entries.append((key: key, value: value, line: lineNumber))
        }
        return entries
    }

    private static func unquote(_ text: String, file: String, line: Int) throws -> String {
        var result = ""
        var iterator = text.dropFirst().makeIterator()
        while let c = iterator.next() {
            switch c {
            case "\"":
                let tail = String(iterator).trimmingCharacters(in: .whitespaces)
                guard tail.isEmpty || tail.hasPrefix("#") else {
                    throw ConfigurationError.syntax(file: file, line: line, reason: "unexpected text after string")
                }
                return result
            case "\\":
                switch iterator.next() {
                case "\"": result.append("\"")
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "t": result.append("\t")
                default: throw ConfigurationError.syntax(file: file, line: line, reason: "unsupported escape in string")
                }
            default: result.append(c)
            }
        }
        throw ConfigurationError.syntax(file: file, line: line, reason: "unterminated string")
    }

    /// A string as a TOML basic string.
    static func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\t", with: "\\t") + "\""
    }
}
