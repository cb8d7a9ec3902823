import Foundation

/// Bound values laid out for libpq: every value's text, NUL-terminated, in one buffer, plus the
/// parameter type OIDs. Two allocations per statement instead of one C string per value.
struct PostgresParameters {
    private var buffer: [UInt8] = []
    /// Offset of each value in `buffer` (-1 for NULL) and its type OID (0 = let the server infer).
    private var slots: [(offset: Int, type: UInt32)] = []

    var count: Int { slots.count }

    /// The parameter type OIDs, for `PQprepare`.
    var types: [UInt32] { slots.map(\.type) }

    init(_ binds: [PostgresBindable?]) throws {
        guard !binds.isEmpty else { return }
        buffer.reserveCapacity(16 * binds.count)
        slots.reserveCapacity(binds.count)
        for (index, bind) in binds.enumerated() {
            guard let bind else {
                slots.append((-1, 0))
                continue
            }
            let start = buffer.count
            bind.encodePostgresText(into: &buffer)
            // libpq sends text parameters as C strings: a NUL would silently cut the value short.
            let hasNUL = buffer.withUnsafeBufferPointer { memchr($0.baseAddress! + start, 0, $0.count - start) != nil }
            if hasNUL {
                throw PostgresError.invalidParameter(
                    index: index, reason: "text contains a NUL byte, which PostgreSQL cannot store")
            }
            buffer.append(0)
            slots.append((start, bind.postgresType.oid))
        }
    }

    /// Whether these parameters have exactly `types`.
    func hasTypes(_ types: [UInt32]) -> Bool {
        guard types.count == slots.count else { return false }
        for index in 0..<types.count where types[index] != slots[index].type { return false }
        return true
    }

    /// Calls `body` with the C string array libpq takes as `paramValues` (nil when there are none).
    func withValues<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> R) rethrows -> R {
        guard !slots.isEmpty else { return try body(nil) }
        return try buffer.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            return try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: slots.count) {
                pointers in
                for (index, slot) in slots.enumerated() {
                    pointers[index] = slot.offset < 0 ? nil : base + slot.offset
                }
                return try body(UnsafePointer(pointers.baseAddress!))
            }
        }
    }
}
