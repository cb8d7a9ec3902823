/// One non-NULL value of a result, as a decoder sees it: its text bytes and its column's name and type.
///
/// `bytes` point into the `PGresult` and are valid only during the `PostgresDecodable.decode(from:)`
/// call; decoders copy what they keep.
public struct PostgresCell {
    /// The value in PostgreSQL's text output format, without the terminating NUL.
    public let bytes: UnsafeRawBufferPointer
    /// The column's type.
    public let type: PostgresType
    /// The column's name, for error messages.
    public let column: String

    /// Wraps the bytes of one value (the result wrapper builds cells; public for custom decoders' tests).
    public init(bytes: UnsafeRawBufferPointer, type: PostgresType, column: String) {
        self.bytes = bytes
        self.type = type
        self.column = column
    }

    /// The error to throw when this cell cannot become `expected`.
    public func mismatch<T>(_ expected: T.Type) -> PostgresError {
        .typeMismatch(column: column, expected: String(describing: expected), actual: type.description)
    }

    /// The bytes as a `String` (a copy).
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}
