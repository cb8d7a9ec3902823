/// `keys` and `excludeKeys` names of the form `pointer.field`, one level into a joined pointer.
extension ParseQuery {
    /// The joinable pointer field `name` of `schema` (102 when there is none such).
    static func joinableField(_ schema: ParseClassSchema, _ name: String, parameter: String) throws
        -> ParseField
    {
        guard let field = schema.field(named: name) else {
            throw ParseError.invalidQuery("\(parameter) names unknown field \(ParseWhereParser.quoted(name))")
        }
        guard field.joinAlias != nil else {
            throw ParseError.invalidQuery("\(parameter): \(name) is not a pointer that can be included")
        }
        return field
    }

    /// `pointer.field` → (pointer, field) after checking both; nil when `key` has no dot.
    static func dotted(
        _ schema: ParseClassSchema, _ key: String, parameter: String,
        target: (String) throws -> ParseReadableClass?
    ) throws -> (String, String)? {
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > 1 else { return nil }
        guard parts.count == 2 else {
            throw ParseError.invalidQuery("\(parameter) supports one level only: \(ParseWhereParser.quoted(key))")
        }
        let root = try joinableField(schema, String(parts[0]), parameter: parameter)
        guard let className = root.pointerClassName, let readable = try target(className),
            readable.schema.field(named: String(parts[1])) != nil
        else {
            throw ParseError.invalidQuery("\(parameter) names unknown field \(ParseWhereParser.quoted(key))")
        }
        return (root.name, String(parts[1]))
    }
}
