extension ParseRowSource {
    /// Writes `key` and the column's value as Parse JSON, for the types both encoders write alike
    /// (`ParseObjectEncoder`, a view's `PhotoView.Selection`): a string, a number, a boolean, a date
    /// (bare ISO text when `isoDate`, as `createdAt`/`updatedAt` are; else Parse's Date object) or
    /// an array of strings. Nothing when the value reads as nil. Files, pointers, ACLs and JSON are
    /// each encoder's own: nothing is written for them here.
    // Inlined: it runs once per field of every object a find writes.
    @inline(__always)
    func writePlainValue(
        _ column: Column, type: ParseFieldType, as key: [UInt8], isoDate: Bool, into writer: inout ParseJSONWriter
    ) throws {
        switch type {
        case .string:
            _ = try writeString(column, as: key, into: &writer)
        case .int:
            _ = try writeInt(column, as: key, into: &writer)
        case .double:
            guard let value = try double(column) else { return }
            writer.key(json: key)
            writer.double(value)
        case .bool:
            guard let value = try bool(column) else { return }
            writer.key(json: key)
            writer.bool(value)
        case .date:
            guard let milliseconds = try milliseconds(column) else { return }
            writer.key(json: key)
            if isoDate {
                writer.isoDate(milliseconds: milliseconds)
            } else {
                writer.parseDate(milliseconds: milliseconds)
            }
        case .stringArray:
            _ = try writeStringArray(column, as: key, into: &writer)
        case .file, .pointer, .acl, .json:
            return
        }
    }
}
