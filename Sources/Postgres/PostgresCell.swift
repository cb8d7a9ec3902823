/// One value of a result, as a decoder sees it: its text bytes and its column's type and name.
///
/// `bytes` point into the `PGresult` and are valid only during the `PostgresDecodable` call;
/// decoders copy what they keep.
public struct PostgresCell {
    /// The value in PostgreSQL's text output format, without the terminating NUL (empty for NULL).
    public let bytes: UnsafeRawBufferPointer
    /// The column's type.
    public let type: PostgresType
    private let result: PostgresResult
    private let columnIndex: Int

    init(bytes: UnsafeRawBufferPointer, type: PostgresType, result: PostgresResult, columnIndex: Int) {
        self.bytes = bytes
        self.type = type
        self.result = result
        self.columnIndex = columnIndex
    }

    /// The column's name (built on demand: it is only needed for error messages).
    public var column: String { result.columnName(columnIndex) }

    /// The error to throw when this cell cannot become `expected`.
    public func mismatch<T>(_ expected: T.Type) -> PostgresError {
        .typeMismatch(column: column, expected: String(describing: expected), actual: type.description)
    }

    /// The error to throw when this cell is NULL and `expected` cannot hold NULL.
    public func nullMismatch<T>(_ expected: T.Type) -> PostgresError {
        .typeMismatch(column: column, expected: String(describing: expected), actual: "NULL")
    }

    /// The bytes as a `String` (a copy).
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}
