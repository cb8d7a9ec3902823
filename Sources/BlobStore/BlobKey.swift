/// A validated blob key: `/`-separated segments of safe characters, never absolute, never `..`,
/// never empty segments or NUL, so a key can only name a file inside the store's root.
public struct BlobKey: Hashable, Sendable, CustomStringConvertible {
    /// The key text, e.g. `thumbnails/Ab3dE5fG7h.jpg`.
    public let rawValue: String

    /// Longest key accepted, in bytes (S3 allows 1024).
    public static let maxLength = 1024
    /// Longest segment accepted, in bytes: NAME_MAX of Linux filesystems, so a key never asks the
    /// filesystem for a name it cannot have (stat would fail with ENAMETOOLONG, not "no such key").
    public static let maxSegmentLength = 255

    /// Validates a key; throws `BlobStoreError.invalidKey` saying why it was refused.
    public init(_ rawValue: String) throws {
        guard !rawValue.isEmpty else { throw BlobStoreError.invalidKey(rawValue, reason: "empty key") }
        guard rawValue.utf8.count <= Self.maxLength else {
            throw BlobStoreError.invalidKey(
                String(rawValue.prefix(64)), reason: "key longer than \(Self.maxLength) bytes")
        }
        // The first byte first: `hasPrefix` compares Characters, which every bucket GET would pay for.
        guard !(rawValue.utf8.first == UInt8(ascii: "/") && rawValue.hasPrefix("/")) else {
            throw BlobStoreError.invalidKey(rawValue, reason: "absolute path")
        }
        // Every bucket GET validates its key: over its contiguous bytes in place when it can (the
        // UTF-8 view's own iteration costs several times more per byte; decision 041).
        if try rawValue.utf8.withContiguousStorageIfAvailable({ try Self.validate($0, rawValue) }) == nil {
            try Self.validate(rawValue.utf8, rawValue)
        }
        self.rawValue = rawValue
    }

    /// A key whose text was validated before (the open-file cache holds only validated keys).
    init(validated rawValue: String) { self.rawValue = rawValue }

    /// One pass over the key's bytes, segment by segment.
    private static func validate<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ rawValue: String) throws {
        var segmentStart = 0
        var index = 0
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                try Self.checkSegment(rawValue, length: index - segmentStart)
                segmentStart = index + 1
            } else {
                if index == segmentStart && byte == UInt8(ascii: ".") {
                    throw BlobStoreError.invalidKey(
                        rawValue, reason: "segment starting with '.' (., .. or a hidden name)")
                }
                let allowed =
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F || byte == 0x2E
                guard allowed else {
                    throw BlobStoreError.invalidKey(rawValue, reason: "character outside A-Z a-z 0-9 - _ .")
                }
            }
            index += 1
        }
        try Self.checkSegment(rawValue, length: index - segmentStart)
    }

    private static func checkSegment(_ rawValue: String, length: Int) throws {
        guard length > 0 else { throw BlobStoreError.invalidKey(rawValue, reason: "empty path segment") }
        guard length <= maxSegmentLength else {
            throw BlobStoreError.invalidKey(
                String(rawValue.prefix(64)), reason: "path segment longer than \(maxSegmentLength) bytes")
        }
    }

    /// The key for an original, addressed by its SHA-256 (hex), with its format's extension
    /// (`jpg`, `png`, `webp`, `heic`, `avif`).
    public static func original(sha256 hex: String, extension ext: String = "jpg") throws -> BlobKey {
        try BlobKey("originals/\(hex).\(ext)")
    }
    /// The key for a photo's thumbnail.
    public static func thumbnail(objectId: String) throws -> BlobKey { try BlobKey("thumbnails/\(objectId).jpg") }
    /// The key for a photo's preview.
    public static func preview(objectId: String) throws -> BlobKey { try BlobKey("previews/\(objectId).jpg") }

    /// The last path segment (the file name).
    public var lastComponent: String { rawValue.split(separator: "/").last.map(String.init) ?? rawValue }

    public var description: String { rawValue }
}
