/// A view's objects written from the Photo rows its query selected: the selected fields under
/// the view's names, a file's URL as the same (signed) URL Photo hands out, null values left out.
extension PhotoView.Selection {
    /// `{"results":[…]}` (plus `"count":N` when `count` is given).
    func findResponse<Row: ParseRowSource>(_ rows: [Row], count: Int64?, encoder: ParseObjectEncoder) throws
        -> [UInt8]
    {
        var writer = ParseJSONWriter(capacity: 64 + rows.count * 400)
        writer.beginObject()
        writer.key("results")
        writer.beginArray()
        if let first = rows.first {
            // Every row of a page has the same columns: find them once.
            let columns = fields.map { first.column(named: $0.source.column) }
            for row in rows { try write(row, columns: columns, encoder: encoder, into: &writer) }
        }
        writer.endArray()
        if let count {
            writer.key("count")
            writer.int(count)
        }
        writer.endObject()
        return writer.bytes
    }

    /// One object, as `GET /classes/<View>/<id>` returns it.
    func object<Row: ParseRowSource>(_ row: Row, encoder: ParseObjectEncoder) throws -> [UInt8] {
        var writer = ParseJSONWriter(capacity: 512)
        try write(row, columns: fields.map { row.column(named: $0.source.column) }, encoder: encoder, into: &writer)
        return writer.bytes
    }

    private func write<Row: ParseRowSource>(
        _ row: Row, columns: [Row.Column?], encoder: ParseObjectEncoder, into writer: inout ParseJSONWriter
    ) throws {
        writer.beginObject()
        for (index, field) in fields.enumerated() {
            guard let column = columns[index] else { continue }
            switch field.part {
            case .url:
                guard let key = try row.string(column) else { continue }
                writer.key(json: field.jsonKey)
                writer.string(encoder.url(forKey: key))
            case .name:
                guard let key = try row.string(column) else { continue }
                writer.key(json: field.jsonKey)
                writer.string(Self.fileName(key))
            case .value:
                try writeValue(row, column, field, encoder: encoder, into: &writer)
            }
        }
        writer.endObject()
    }

    private func writeValue<Row: ParseRowSource>(
        _ row: Row, _ column: Row.Column, _ field: PhotoView.Field, encoder: ParseObjectEncoder,
        into writer: inout ParseJSONWriter
    ) throws {
        switch field.source.type {
        case .string, .int, .double, .bool, .date, .stringArray:
            try row.writePlainValue(
                column, type: field.source.type, as: field.jsonKey, isoDate: field.isDefault, into: &writer)
        case .file:
            guard let key = try row.string(column) else { return }
            writer.key(json: field.jsonKey)
            writer.beginObject()
            writer.key("__type")
            writer.string("File")
            writer.key("name")
            writer.string(Self.fileName(key))
            writer.key("url")
            writer.string(encoder.url(forKey: key))
            writer.endObject()
        case .pointer, .acl, .json:
            // `ViewDefinition.resolve` admits none of these.
            return
        }
    }

    /// A blob key's last segment, as Photo names its files.
    static func fileName(_ key: String) -> String {
        guard let slash = key.lastIndex(of: "/") else { return key }
        return String(key[key.index(after: slash)...])
    }
}
