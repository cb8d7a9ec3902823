/// A built-in class as `/parse/schemas` shows it: `className` and `fields` with Parse's type
/// names (its class-level permissions are fixed in code, docs/security.md, and not shown).
extension ParseClassSchema {
    /// Writes `{"className":…,"fields":{…}}`.
    func writeSchema(into writer: inout ParseJSONWriter) {
        writer.beginObject()
        writer.key("className")
        writer.string(className)
        writer.key("fields")
        writer.beginObject()
        for field in fields {
            writer.key(field.name)
            writer.beginObject()
            writer.key("type")
            switch field.type {
            case .pointer(let target):
                writer.string("Pointer")
                writer.key("targetClass")
                writer.string(target)
            case .stringArray:
                writer.string("Array")
            default:
                writer.string(field.type.parseName)
            }
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
    }
}
