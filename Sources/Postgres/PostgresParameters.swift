import Foundation

/// Bound values laid out for libpq: every value's text, NUL-terminated, in one buffer, plus the
/// parameter type OIDs. One allocation per statement instead of one C string per value.
struct PostgresParameters {
    private var buffer: [UInt8] = []
    /// Offset of each value in `buffer`, -1 for NULL.
    private var offsets: [Int] = []
    /// Type OID of each parameter (0 = let the server infer).
    private(set) var types: [UInt32] = []

    var count: Int { offsets.count }

    init(_ binds: [PostgresBindable?]) throws {
        guard !binds.isEmpty else { return }
        buffer.reserveCapacity(16 * binds.count)
        offsets.reserveCapacity(binds.count)
        types.reserveCapacity(binds.count)
        for (index, bind) in binds.enumerated() {
            guard let bind else {
                offsets.append(-1)
                types.append(0)
                continue
            }
            let start = buffer.count
            bind.encodePostgresText(into: &buffer)
            // libpq sends text parameters as C strings: a NUL would silently cut the value short.
            let hasNUL = buffer.withUnsafeBufferPointer { memchr($0.baseAddress! + start, 0, $0.count - start) != nil }
            if hasNUL { throw PostgresError.invalidParameter(index: index, reason: "text contains a NUL byte, which PostgreSQL cannot store") }
            buffer.append(0)
            offsets.append(start)
            types.append(bind.postgresType.oid)
        }
    }

    /// Calls `body` with the C string array libpq takes as `paramValues` (nil when there are none).
    func withValues<R>(_ body: (UnsafePointer<UnsafePointer<CChar>?>?) throws -> R) rethrows -> R {
        guard !offsets.isEmpty else { return try body(nil) }
        return try buffer.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            return try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: offsets.count) { pointers in
                for (index, offset) in offsets.enumerated() {
                    pointers[index] = offset < 0 ? nil : base + offset
                }
                return try body(UnsafePointer(pointers.baseAddress!))
            }
        }
    }
}
