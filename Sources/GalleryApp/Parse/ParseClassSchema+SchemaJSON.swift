/// A built-in class as `/parse/schemas` shows it: `className` and `fields` with Parse's type
/// names, and its class-level permissions when given (`BuiltInClassPermissions`).
extension ParseClassSchema {
    /// Writes `{"className":…,"fields":{…}}`, with `"classLevelPermissions":{…}` when `permissions` is given.
    func writeSchema(into writer: inout ParseJSONWriter, permissions: ClassLevelPermissions? = nil) {
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
        if let permissions {
            writer.key("classLevelPermissions")
            permissions.write(into: &writer)
        }
        writer.endObject()
    }
}
