#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Key text as a dictionary key, hashed once from its UTF-8 bytes. The signed bucket GET looks one
/// key up in two tables, the URL signer's segment cache and the open-file cache: with this key
/// type it does both from the request path's bytes in place, with one pass of the hash function
/// over the key (each table then hashes that one number) and no String made for the key when both
/// hit (decision 041, round 9).
///
/// Two keys are equal when their bytes are. Blob keys are ASCII (`BlobKey`), so for them that is
/// what String equality says; for other text it is stricter, so a lookup may miss where a String
/// key would hit, never the other way round. The hash comes from this process's `Hasher`, seeded at
/// random at start, so a table of these resists chosen keys as one of Strings does.
///
/// A stored key owns its text (`init(_:)`). A probe (`probe(_:_:)`) borrows bytes for the duration
/// of its closure only: it is for lookups, and must not be stored in a table or kept.
public struct HashedKey: Hashable, @unchecked Sendable {
    /// The hash of the key's bytes.
    private let hash: Int
    /// The key's text, owned; nil for a probe.
    public let text: String?
    /// A probe's bytes (empty for a stored key).
    private let borrowed: UnsafeRawBufferPointer

    /// A key that owns `text`, to store in a table.
    public init(_ text: String) {
        var text = text
        hash = text.withUTF8 { Self.hash(UnsafeRawBufferPointer($0)) }
        self.text = text
        borrowed = UnsafeRawBufferPointer(start: nil, count: 0)
    }

    private init(borrowing bytes: UnsafeRawBufferPointer) {
        hash = Self.hash(bytes)
        text = nil
        borrowed = bytes
    }

    /// Runs `body` with a key over `bytes` (not copied): a lookup that makes no String.
    public static func probe<Result>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (HashedKey) throws -> Result
    ) rethrows -> Result {
        try body(HashedKey(borrowing: UnsafeRawBufferPointer(bytes)))
    }

    /// The key's text: its own, or a String made from a probe's bytes.
    public var string: String {
        text ?? String(decoding: borrowed.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Runs `body` with the key's UTF-8 bytes.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        guard let text else { return try body(borrowed) }
        if let result = try text.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(text.utf8).withUnsafeBytes(body)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(hash) }

    public static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
        guard lhs.hash == rhs.hash else { return false }
        return lhs.withBytes { a in
            rhs.withBytes { b in
                a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
            }
        }
    }

    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }
}
