import Crypto
import Foundation

/// Signs the asset URLs galleryd hands out and checks them at the bucket endpoint, with no
/// database access: `/<bucket>/<key>?X-Gallery-Expires=<unix seconds>&X-Gallery-Signature=<sig>`.
///
/// `sig` is HMAC-SHA256, keyed with `url_signing_key`, over the canonical string
/// `galleryd-asset-v1\n/<bucket>/<key>\n<expires>` (the key as stored, not percent-encoded; expires
/// in decimal), written base64url without padding (43 characters). It binds the object and the
/// expiry, not the host, so a CDN (`public_asset_url`) forwarding to the bucket serves the same URLs.
///
/// The expiry is the end of the current window plus the validity: every URL issued for one key
/// in one window (`url_window_seconds`, a day) is byte-identical, so URL-keyed image caches
/// (URLCache, Kingfisher) keep hitting, and each stays valid for at least `url_validity_seconds`
/// (seven days) and at most that plus a window. Because the URL is stable within a window, its
/// query is computed once per key and window and kept (`query(forKey:expires:)`).
public final class AssetURLSigner: @unchecked Sendable {
    /// The query parameter holding the expiry (Unix seconds).
    public static let expiresParameter = "X-Gallery-Expires"
    /// The query parameter holding the signature.
    public static let signatureParameter = "X-Gallery-Signature"
    /// Shortest `url_signing_key` accepted: 32 characters (`make run` generates 64 hex digits).
    public static let minimumKeyLength = 32
    /// Keys whose query is kept per window; past this the cache starts over (a page of the
    /// manifest holds three keys per photo, so this is tens of thousands of photos).
    static let maxCachedKeys = 100_000

    /// The bucket name in the signed path.
    public let bucket: String
    /// Seconds of one window: URLs issued within it are identical.
    public let window: Int64
    /// Seconds a URL stays valid at least.
    public let validity: Int64
    private let key: SymmetricKey
    private let pathPrefix: [UInt8]
    private let lock = NSLock()
    private var cacheExpires: Int64 = 0
    private var cache: [String: [UInt8]] = [:]

    /// A signer keyed with `key` (at least `minimumKeyLength` characters, checked by the configuration).
    public init(key: String, bucket: String, windowSeconds: Int, validitySeconds: Int) {
        self.key = SymmetricKey(data: Array(key.utf8))
        self.bucket = bucket
        self.window = Int64(max(1, windowSeconds))
        self.validity = Int64(max(0, validitySeconds))
        self.pathPrefix = Array("galleryd-asset-v1\n/\(bucket)/".utf8)
    }

    /// The expiry of a URL issued at `now` (Unix seconds): the end of `now`'s window plus the validity.
    public func expires(at now: Int64) -> Int64 {
        let start = now >= 0 ? now / window * window : ((now + 1) / window - 1) * window
        return start + window + validity
    }

    /// The expiry of a URL issued now.
    public func expiresNow() -> Int64 { expires(at: Int64(Date().timeIntervalSince1970)) }

    /// `?X-Gallery-Expires=…&X-Gallery-Signature=…` for `key` (as stored), from the cache when
    /// this window's query for the key was made before.
    public func query(forKey key: String, expires: Int64) -> [UInt8] {
        lock.lock()
        if expires == cacheExpires, let cached = cache[key] {
            lock.unlock()
            return cached
        }
        lock.unlock()
        let query = Self.query(expires: expires, signature: signature(key: Array(key.utf8), expires: expires))
        lock.lock()
        defer { lock.unlock() }
        if expires > cacheExpires {
            // A new window: the old window's queries are never asked for again.
            cacheExpires = expires
            cache.removeAll(keepingCapacity: true)
        }
        if expires == cacheExpires {
            if cache.count >= Self.maxCachedKeys { cache.removeAll(keepingCapacity: true) }
            cache[key] = query
        }
        return query
    }

    /// As `query(forKey:expires:)` for a key given as UTF-8 bytes (straight from a result row).
    public func query(forKey key: UnsafeBufferPointer<UInt8>, expires: Int64) -> [UInt8] {
        query(forKey: String(decoding: key, as: UTF8.self), expires: expires)
    }

    /// The base64url signature (no padding) of `key` with `expires`.
    func signature(key: [UInt8], expires: Int64) -> [UInt8] {
        var canonical = pathPrefix
        canonical.reserveCapacity(pathPrefix.count + key.count + 21)
        canonical.append(contentsOf: key)
        canonical.append(UInt8(ascii: "\n"))
        canonical.append(contentsOf: String(expires).utf8)
        let code = HMAC<SHA256>.authenticationCode(for: canonical, using: self.key)
        return Self.base64URL(Array(code))
    }

    /// Checks the signature and expiry a bucket request carries for `key` (as the path names it,
    /// decoded) at `now`; throws `AssetURLError` when they are missing, malformed, wrong or past.
    /// The signature is always computed and compared in time independent of where it differs.
    public func verify(key: String, query: String?, now: Int64) throws {
        guard let query else { throw AssetURLError.missing }
        var expiresText: Substring?
        var given: Substring?
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            if part.hasPrefix(Self.expiresParameter + "=") {
                guard expiresText == nil else { throw AssetURLError.malformed("\(Self.expiresParameter) is given more than once") }
                expiresText = part.dropFirst(Self.expiresParameter.utf8.count + 1)
            } else if part.hasPrefix(Self.signatureParameter + "=") {
                guard given == nil else { throw AssetURLError.malformed("\(Self.signatureParameter) is given more than once") }
                given = part.dropFirst(Self.signatureParameter.utf8.count + 1)
            }
        }
        guard let expiresText, let given else { throw AssetURLError.missing }
        guard (1...18).contains(expiresText.utf8.count), expiresText.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let expires = Int64(expiresText)
        else { throw AssetURLError.malformed("\(Self.expiresParameter) is not a Unix time") }
        let expected = signature(key: Array(key.utf8), expires: expires)
        guard KeyChecker.constantTimeEquals(Array(given.utf8), expected) else { throw AssetURLError.signatureMismatch }
        guard now <= expires else { throw AssetURLError.expired(expires) }
    }

    /// `?X-Gallery-Expires=<expires>&X-Gallery-Signature=<signature>`.
    static func query(expires: Int64, signature: [UInt8]) -> [UInt8] {
        var query = Array("?\(expiresParameter)=\(expires)&\(signatureParameter)=".utf8)
        query.append(contentsOf: signature)
        return query
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// RFC 4648 §5 base64url, without padding.
    static func base64URL(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            var n = UInt32(bytes[i]) << 16
            if rest == 2 { n |= UInt32(bytes[i + 1]) << 8 }
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return out
    }
}
