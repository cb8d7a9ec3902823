/// One row of a `PostgresResult`; decode its columns by name or position:
/// `try row.decode(String.self, "title")`, `try row.decode(Date?.self, "taken_at")`, `try row.decode(Int.self, 0)`.
///
/// Keeps its result alive; values are copied out as they are decoded.
public struct PostgresRow: Sendable {
    /// The result this row belongs to.
    public let result: PostgresResult
    /// The row's position in the result.
    public let index: Int

    /// The result's column names.
    public var columnNames: [String] { result.columnNames }

    /// Decodes the column called `column` as `type`; throws `columnNotFound`, or `typeMismatch` when the
    /// column's type does not fit or it is NULL and `type` is not Optional.
    public func decode<T: PostgresDecodable>(_ type: T.Type, _ column: String) throws -> T {
        guard let position = result.columnIndex(column) else { throw PostgresError.columnNotFound(column) }
        return try result.decode(type, row: index, column: position)
    }

    /// Decodes the column at `column` (0-based) as `type`.
    public func decode<T: PostgresDecodable>(_ type: T.Type, _ column: Int) throws -> T {
        guard column >= 0 && column < result.columnCount else { throw PostgresError.columnNotFound("#\(column)") }
        return try result.decode(type, row: index, column: column)
    }

    /// The position of the column called `name`, or nil (look it up once, then read by position).
    public func columnIndex(_ name: String) -> Int? { result.columnIndex(name) }

    /// The type of the column at `column` (0-based, in range).
    public func columnType(_ column: Int) -> PostgresType { result.columnType(column) }

    /// Calls `body` with the text form of the value at `column` (0-based, in range) as stored in
    /// the result, or nil for NULL. The bytes are valid only during the call: for writers that
    /// copy a value somewhere without making a Swift value of it first.
    public func withTextBytes<R>(_ column: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        try body(result.textBytes(row: index, column: column))
    }

    /// The `timestamptz`, `timestamp` (as UTC) or `date` at `column` as exact microseconds since
    /// 1970, or nil for NULL, another type, `±infinity` or an unreadable value.
    public func timestampMicroseconds(_ column: Int) -> Int64? {
        switch columnType(column) {
        case .timestamptz, .timestamp, .date:
            return withTextBytes(column) { $0.flatMap(PostgresTextFormat.parseTimestampMicroseconds) }
        default:
            return nil
        }
    }

    /// Whether the column called `column` is NULL in this row.
    public func isNull(_ column: String) throws -> Bool {
        guard let position = result.columnIndex(column) else { throw PostgresError.columnNotFound(column) }
        return result.isNull(row: index, column: position)
    }
}
