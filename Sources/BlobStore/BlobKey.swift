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
            throw BlobStoreError.invalidKey(String(rawValue.prefix(64)), reason: "key longer than \(Self.maxLength) bytes")
        }
        guard !rawValue.hasPrefix("/") else { throw BlobStoreError.invalidKey(rawValue, reason: "absolute path") }
        for segment in rawValue.split(separator: "/", omittingEmptySubsequences: false) {
            guard !segment.isEmpty else { throw BlobStoreError.invalidKey(rawValue, reason: "empty path segment") }
            guard segment.utf8.count <= Self.maxSegmentLength else {
                throw BlobStoreError.invalidKey(
                    String(rawValue.prefix(64)), reason: "path segment longer than \(Self.maxSegmentLength) bytes")
            }
            guard segment != "." && segment != ".." else {
                throw BlobStoreError.invalidKey(rawValue, reason: "'.' or '..' segment")
            }
            guard !segment.hasPrefix(".") else {
                throw BlobStoreError.invalidKey(rawValue, reason: "hidden path segment")
            }
            for byte in segment.utf8 {
                let allowed = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                    || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F || byte == 0x2E
                guard allowed else {
                    throw BlobStoreError.invalidKey(rawValue, reason: "character outside A-Z a-z 0-9 - _ .")
                }
            }
        }
        self.rawValue = rawValue
    }

    /// The key for an original, addressed by its SHA-256 (hex).
    public static func original(sha256 hex: String) throws -> BlobKey { try BlobKey("originals/\(hex).jpg") }
    /// The key for a photo's thumbnail.
    public static func thumbnail(objectId: String) throws -> BlobKey { try BlobKey("thumbnails/\(objectId).jpg") }
    /// The key for a photo's preview.
    public static func preview(objectId: String) throws -> BlobKey { try BlobKey("previews/\(objectId).jpg") }

    /// The last path segment (the file name).
    public var lastComponent: String { rawValue.split(separator: "/").last.map(String.init) ?? rawValue }

    public var description: String { rawValue }
}
