import Crypto
import Foundation

/// A session token as Parse Server issues them, `r:` and 32 random bytes (64 hex digits), and the
/// SHA-256 the `sessions` table stores in its place (migrations/0012_users.sql).
public struct SessionToken: Sendable, Hashable {
    /// The token as the client sends it (`X-Parse-Session-Token`, or `_SessionToken` in a body).
    public let value: String

    public init(_ value: String) { self.value = value }

    /// A new random token (the system's CSPRNG).
    public static func random() -> SessionToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return SessionToken("r:" + hex(bytes))
    }

    /// What the database keeps and looks the token up by: the SHA-256 of its UTF-8 bytes, in hex.
    public var hash: String { Self.hex(Array(SHA256.hash(data: Array(value.utf8)))) }

    /// Whether a string can be a token at all (bounded, printable ASCII): anything else is rejected
    /// before it reaches the database.
    public var isPlausible: Bool {
        !value.isEmpty && value.utf8.count <= 256 && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    private static let digits = Array("0123456789abcdef".utf8)

    static func hex(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
