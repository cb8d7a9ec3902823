import CLibpq
import Foundation

/// The rows a statement returned, owning libpq's `PGresult` (cleared in `deinit`).
///
/// Immutable once built, so it may be read from any thread (libpq allows that for `PGresult`) and
/// outlives the connection that produced it. Rows read values straight out of the `PGresult` and
/// copy them into Swift values when decoded.
public final class PostgresResult: RandomAccessCollection, @unchecked Sendable {
    private let handle: OpaquePointer
    /// The result's column names, in order.
    public let columnNames: [String]
    /// The result's column types, in order.
    public let columnTypes: [PostgresType]
    /// Number of rows.
    public let count: Int
    /// Rows inserted, updated, deleted, selected, … as the command tag says (0 for commands without).
    public let affectedRows: Int

    init(handle: OpaquePointer) {
        self.handle = handle
        count = Int(PQntuples(handle))
        let columnCount = Int(PQnfields(handle))
        var names: [String] = []
        var types: [PostgresType] = []
        names.reserveCapacity(columnCount)
        types.reserveCapacity(columnCount)
        for column in 0..<Int32(columnCount) {
            names.append(PQfname(handle, column).map { String(cString: $0) } ?? "?column?")
            types.append(PostgresType(oid: PQftype(handle, column)))
        }
        columnNames = names
        columnTypes = types
        if let tuples = PQcmdTuples(handle), tuples.pointee != 0 {
            affectedRows = Int(PostgresTextFormat.parseInteger(UnsafeRawBufferPointer(start: tuples, count: strlen(tuples))) ?? 0)
        } else {
            affectedRows = 0
        }
    }

    deinit { PQclear(handle) }

    /// The first row's index, 0.
    public var startIndex: Int { 0 }
    /// One past the last row's index, `count`.
    public var endIndex: Int { count }

    /// The row at `index` (0-based).
    public subscript(index: Int) -> PostgresRow {
        precondition(index >= 0 && index < count, "row index \(index) out of range 0..<\(count)")
        return PostgresRow(result: self, index: index)
    }

    /// The position of the column called `name` (exactly as the server names it: unquoted
    /// identifiers are lower case), or nil.
    public func columnIndex(_ name: String) -> Int? {
        for (index, candidate) in columnNames.enumerated() where candidate == name { return index }
        return nil
    }

    /// Whether the value at `row`, `column` is NULL.
    func isNull(row: Int, column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) == 1
    }

    /// Decodes the value at `row`, `column` (both in range).
    func decode<T: PostgresDecodable>(_ type: T.Type, row: Int, column: Int) throws -> T {
        let r = Int32(row)
        let c = Int32(column)
        if PQgetisnull(handle, r, c) == 1 {
            return try T.decodeNull(column: columnNames[column], type: columnTypes[column])
        }
        let bytes = UnsafeRawBufferPointer(start: PQgetvalue(handle, r, c), count: Int(PQgetlength(handle, r, c)))
        return try T.decode(from: PostgresCell(bytes: bytes, type: columnTypes[column], column: columnNames[column]))
    }
}
