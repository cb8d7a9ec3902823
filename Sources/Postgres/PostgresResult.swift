import CLibpq
import Foundation

/// The rows a statement returned, owning libpq's `PGresult` (cleared in `deinit`).
///
/// Immutable once built, so it may be read from any thread (libpq allows that for `PGresult`) and
/// outlives the connection that produced it. Rows read values straight out of the `PGresult` and
/// copy them into Swift values when decoded; nothing is copied for columns never read.
// @unchecked: the PGresult is never changed after it is built, and libpq allows reading it from any thread.
public final class PostgresResult: RandomAccessCollection, @unchecked Sendable {
    private let handle: OpaquePointer
    /// Number of rows.
    public let count: Int
    /// Number of columns.
    public let columnCount: Int

    init(handle: OpaquePointer) {
        self.handle = handle
        count = Int(PQntuples(handle))
        columnCount = Int(PQnfields(handle))
    }

    deinit { PQclear(handle) }

    /// The result's column names, in order.
    public var columnNames: [String] { (0..<columnCount).map(columnName) }

    /// The result's column types, in order.
    public var columnTypes: [PostgresType] { (0..<columnCount).map(columnType) }

    /// Rows inserted, updated, deleted, selected, … as the command tag says (0 for commands without).
    public var affectedRows: Int {
        guard let tuples = PQcmdTuples(handle), tuples.pointee != 0 else { return 0 }
        return Int(PostgresTextFormat.parseInteger(UnsafeRawBufferPointer(start: tuples, count: strlen(tuples))) ?? 0)
    }

    /// The first row's index, 0.
    public var startIndex: Int { 0 }
    /// One past the last row's index, `count`.
    public var endIndex: Int { count }

    /// The row at `index` (0-based).
    public subscript(index: Int) -> PostgresRow {
        precondition(index >= 0 && index < count, "row index \(index) out of range 0..<\(count)")
        return PostgresRow(result: self, index: index)
    }

    /// The position of the column called `name`, compared exactly (unquoted identifiers come back
    /// lower case; `as "objectId"` keeps its case), or nil.
    public func columnIndex(_ name: String) -> Int? {
        var name = name
        return name.withUTF8 { bytes -> Int? in
            for column in 0..<Int32(columnCount) {
                guard let candidate = PQfname(handle, column) else { continue }
                if strlen(candidate) == bytes.count
                    && (bytes.count == 0 || memcmp(candidate, bytes.baseAddress!, bytes.count) == 0)
                {
                    return Int(column)
                }
            }
            return nil
        }
    }

    /// The name of the column at `index`.
    public func columnName(_ index: Int) -> String {
        PQfname(handle, Int32(index)).map { String(cString: $0) } ?? "?column?"
    }

    /// The type of the column at `index`.
    public func columnType(_ index: Int) -> PostgresType {
        PostgresType(oid: PQftype(handle, Int32(index)))
    }

    /// Whether the value at `row`, `column` is NULL.
    func isNull(row: Int, column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// The text bytes of the value at `row`, `column` (both in range), or nil for NULL. They point
    /// into the `PGresult`: valid while this result lives.
    func textBytes(row: Int, column: Int) -> UnsafeRawBufferPointer? {
        let r = Int32(row)
        let c = Int32(column)
        if PQgetisnull(handle, r, c) == 1 { return nil }
        return UnsafeRawBufferPointer(start: PQgetvalue(handle, r, c), count: Int(PQgetlength(handle, r, c)))
    }

    /// Decodes the value at `row`, `column` (both in range).
    func decode<T: PostgresDecodable>(_ type: T.Type, row: Int, column: Int) throws -> T {
        let r = Int32(row)
        let c = Int32(column)
        let type = PostgresType(oid: PQftype(handle, c))
        if PQgetisnull(handle, r, c) == 1 {
            return try T.decodeNull(
                from: PostgresCell(
                    bytes: UnsafeRawBufferPointer(start: nil, count: 0), type: type, result: self, columnIndex: column))
        }
        let bytes = UnsafeRawBufferPointer(start: PQgetvalue(handle, r, c), count: Int(PQgetlength(handle, r, c)))
        return try T.decode(from: PostgresCell(bytes: bytes, type: type, result: self, columnIndex: column))
    }
}
