extension ClassLevelPermissions {
    /// Writes how a class's `/parse/schemas` object ends, the same for custom classes and views:
    /// `"classLevelPermissions"` (these), then `"indexes"` with Parse's `_id_` first and `indexes`
    /// after it, each as its fields and their directions.
    func writeSchemaEnd(indexes: [CustomClass.Index] = [], into writer: inout ParseJSONWriter) {
        writer.key("classLevelPermissions")
        write(into: &writer)
        writer.key("indexes")
        writer.beginObject()
        writer.key("_id_")
        writer.beginObject()
        writer.key("_id")
        writer.int(1)
        writer.endObject()
        for index in indexes {
            writer.key(index.name)
            writer.beginObject()
            for key in index.keys {
                writer.key(key.field)
                writer.int(Int64(key.direction))
            }
            writer.endObject()
        }
        writer.endObject()
    }
}
