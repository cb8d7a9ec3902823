// SymmetricKey is an immutable value that swift-crypto does not mark Sendable yet.
import BlobStore
@preconcurrency import Crypto
import Foundation
import Synchronization

/// Signs the asset URLs galleryd hands out and checks them at the bucket endpoint, with no
/// database access. The signature is in the path, `/<bucket>/s/<expires>/<sig>/<key>`, so clients
/// that rebuild a URL without its query (the Parse Swift SDK's `ParseFile.fetch()`, proxies that
/// strip or reorder queries) keep it. URLs handed out before carry it in the query,
/// `/<bucket>/<key>?X-Gallery-Expires=<expires>&X-Gallery-Signature=<sig>`; the bucket still
/// accepts them.
///
/// `sig` is HMAC-SHA256, keyed with `url_signing_key`, over the canonical string
/// `galleryd-asset-v1\n/<bucket>/<key>\n<expires>` (the key as stored, not percent-encoded; expires
/// in Unix seconds, decimal), written base64url without padding (43 characters): both forms sign
/// the same string. It binds the object and the expiry, not the host, so a CDN (`public_asset_url`)
/// forwarding to the bucket serves the same URLs.
///
/// The expiry is the end of the current window plus the validity: every URL issued for one key
/// in one window (`url_window_seconds`, a day) is byte-identical, so URL-keyed image caches
/// (URLCache, Kingfisher) keep hitting, and each stays valid for at least `url_validity_seconds`
/// (seven days) and at most that plus a window. An expiry later than any this server could have
/// issued is refused before its signature is looked at. Because the URL is stable within a window,
/// its signed segment is computed once per key and window and kept (`pathSegment(forKey:expires:)`).
public final class AssetURLSigner: Sendable {
    /// The query parameter holding the expiry (Unix seconds) in URLs of the query form.
    public static let expiresParameter = "X-Gallery-Expires"
    /// The query parameter holding the signature in URLs of the query form.
    public static let signatureParameter = "X-Gallery-Signature"
    /// The first path segment (after the bucket) of a URL of the path form.
    public static let pathMarker = "s"
    /// Shortest `url_signing_key` accepted: 32 characters (`make run` generates 64 hex digits).
    public static let minimumKeyLength = 32
    /// Seconds another instance's clock may run ahead of this one's: its URLs, issued in a window
    /// this clock has not reached yet, are still accepted.
    public static let clockSkewSeconds: Int64 = 60
    /// Keys whose signed segment is kept per window; past this the cache starts over (a page of
    /// the manifest holds three keys per photo, so this is tens of thousands of photos).
    static let maxCachedKeys = 100_000

    /// The bucket name in the signed path.
    public let bucket: String
    /// Seconds of one window: URLs issued within it are identical.
    public let window: Int64
    /// Seconds a URL stays valid at least.
    public let validity: Int64
    private let key: SymmetricKey
    private let pathPrefix: [UInt8]
    /// Signed segments of the current window, by key.
    private let cache = Mutex(SegmentCache())

    /// The window the cached segments expire at, and the segments.
    private struct SegmentCache {
        var expires: Int64 = 0
        /// By key, hashed once from its bytes: the bucket checks a request's key from its path in
        /// place, and looks the same hash up in the open-file cache (`HashedKey`).
        var segments: [HashedKey: [UInt8]] = [:]
    }

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

    /// `s/<expires>/<signature>/`, what goes between the bucket and `key` (as stored) in a signed
    /// URL; from the cache when this window's segment for the key was made (or checked) before.
    public func pathSegment(forKey key: String, expires: Int64) -> [UInt8] {
        let hashed = HashedKey(key)
        if let cached = cached(hashed, expires: expires) { return cached }
        let segment = Self.pathSegment(expires: expires, signature: signature(key: Array(key.utf8), expires: expires))
        remember(hashed, expires: expires, segment: segment)
        return segment
    }

    /// As `pathSegment(forKey:expires:)` for a key given as UTF-8 bytes (straight from a result row).
    public func pathSegment(forKey key: UnsafeBufferPointer<UInt8>, expires: Int64) -> [UInt8] {
        pathSegment(forKey: String(decoding: key, as: UTF8.self), expires: expires)
    }

    /// The cached segment of `key` when it is for `expires`.
    private func cached(_ key: HashedKey, expires: Int64) -> [UInt8]? {
        cache.withLock { expires == $0.expires ? $0.segments[key] : nil }
    }

    /// Keeps a segment made for `expires`: a later window replaces the cache (the old window's
    /// segments are not asked for again), an earlier one is not kept. `key` must own its text.
    private func remember(_ key: HashedKey, expires: Int64, segment: [UInt8]) {
        cache.withLock { cache in
            if expires > cache.expires {
                cache.expires = expires
                cache.segments.removeAll(keepingCapacity: true)
            }
            guard expires == cache.expires else { return }
            if cache.segments.count >= Self.maxCachedKeys { cache.segments.removeAll(keepingCapacity: true) }
            cache.segments[key] = segment
        }
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

    /// Checks a bucket request at `now` and answers the blob key to serve and the URL's expiry:
    /// `captured` is the path after the bucket (decoded), either `s/<expires>/<sig>/<key>` or, in
    /// the query form, the key itself with `query` carrying expiry and signature. Throws
    /// `AssetURLError` when they are missing, malformed, wrong, past or later than this server
    /// could have issued. The segment is read in place from the captured path's bytes; the expected
    /// signature comes from the cache for the current window's URLs (what the API hands out now),
    /// else it is computed; the comparison takes the same time wherever it differs.
    public func verify(captured: String, query: String?, now: Int64) throws -> (key: String, expires: Int64) {
        try verify(captured: Substring(captured), query: query, now: now)
    }

    /// As `verify(captured:query:now:)` for a piece of the request's path, read in place.
    public func verify(captured: Substring, query: String?, now: Int64) throws -> (key: String, expires: Int64) {
        try withVerifiedKey(captured: captured, query: query, now: now) { key, expires in (key.string, expires) }
    }

    /// Checks a bucket request as `verify(captured:query:now:)` does and runs `body` with the key,
    /// read in place from the captured path's bytes (a probe: valid inside `body` only), and the
    /// expiry. The signature cache is looked up with the key's hash, which `body` can use again (the
    /// open-file cache): the signed bucket GET makes no String of its key (decision 041, round 9).
    public func withVerifiedKey<Result>(
        captured: Substring, query: String?, now: Int64, _ body: (HashedKey, Int64) throws -> Result
    ) throws -> Result {
        var captured = captured
        return try captured.withUTF8 { bytes -> Result in
            if let (expires, signature, keyStart) = try Self.pathParameters(in: bytes) {
                return try HashedKey.probe(UnsafeBufferPointer(rebasing: bytes[keyStart...])) { key in
                    try check(
                        key: key, expires: expires, given: UnsafeBufferPointer(rebasing: bytes[signature]), now: now)
                    return try body(key, expires)
                }
            }
            guard var query else { throw AssetURLError.missing }
            return try query.withUTF8 { query -> Result in
                guard let base = query.baseAddress else { throw AssetURLError.missing }
                let (expires, signature) = try Self.queryParameters(in: base, count: query.count)
                return try HashedKey.probe(bytes) { key in
                    try check(
                        key: key, expires: expires, given: UnsafeBufferPointer(rebasing: query[signature]), now: now)
                    return try body(key, expires)
                }
            }
        }
    }

    /// The blob key a path names when signatures are not checked (`bucket_public = true`): the
    /// path form's key without its segment, so URLs signed before the bucket was opened keep working.
    public static func unsignedKey(captured: String) -> String { unsignedKey(captured: Substring(captured)) }

    /// As `unsignedKey(captured:)` for a piece of the request's path, read in place.
    public static func unsignedKey(captured: Substring) -> String {
        var captured = captured
        let key = captured.withUTF8 { bytes -> String? in
            guard let (_, _, keyStart) = try? pathParameters(in: bytes) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[keyStart...]), as: UTF8.self)
        }
        return key ?? String(captured)
    }

    /// The checks both forms share, the cheap ones first: an expiry no URL of this server can
    /// carry, then the signature, then whether it has passed.
    private func check(key: HashedKey, expires: Int64, given: UnsafeBufferPointer<UInt8>, now: Int64) throws {
        guard expires <= now + window + validity + Self.clockSkewSeconds else {
            throw AssetURLError.expiryTooLate(expires)
        }
        let expected: [UInt8]
        var isNew = false
        if let cached = cached(key, expires: expires) {
            expected = cached
        } else {
            let bytes = key.withBytes { Array($0) }
            expected = Self.pathSegment(expires: expires, signature: signature(key: bytes, expires: expires))
            isNew = true
        }
        guard given.count == Self.signatureLength, let givenBase = given.baseAddress else {
            throw AssetURLError.signatureMismatch
        }
        // The segment ends with the signature and a slash. Compared eight bytes at a time (the
        // last word overlapping), every byte whatever the first difference.
        let difference = expected.withUnsafeBytes { segment -> UInt64 in
            let signature = UnsafeRawPointer(segment.baseAddress!) + (segment.count - Self.signatureLength - 1)
            let candidate = UnsafeRawPointer(givenBase)
            var difference: UInt64 = 0
            for offset in stride(from: 0, to: Self.signatureLength - 8, by: 8) {
                difference |=
                    signature.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    ^ candidate.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            }
            let last = Self.signatureLength - 8
            return difference
                | (signature.loadUnaligned(fromByteOffset: last, as: UInt64.self)
                    ^ candidate.loadUnaligned(fromByteOffset: last, as: UInt64.self))
        }
        guard difference == 0 else { throw AssetURLError.signatureMismatch }
        guard now <= expires else { throw AssetURLError.expired(expires) }
        // The table keeps a key that owns its text (a probe's bytes are the request's).
        if isNew { remember(key.text == nil ? HashedKey(key.string) : key, expires: expires, segment: expected) }
    }

    /// Characters of a signature: base64url of 32 bytes, unpadded.
    static let signatureLength = 43
    /// Most digits of an expiry: more would overflow Int64.
    static let maxExpiryDigits = 18
    private static let expiresPrefix: StaticString = "X-Gallery-Expires="
    private static let signaturePrefix: StaticString = "X-Gallery-Signature="

    /// The expiry, where the signature is and where the key starts in a path of the path form;
    /// nil when the path is not of that form (it does not start with `s/`).
    private static func pathParameters(in bytes: UnsafeBufferPointer<UInt8>) throws -> (Int64, Range<Int>, Int)? {
        guard bytes.count >= 2 && bytes[0] == UInt8(ascii: "s") && bytes[1] == UInt8(ascii: "/") else { return nil }
        var i = 2
        var expires: Int64 = 0
        while i < bytes.count && bytes[i] != UInt8(ascii: "/") {
            let byte = bytes[i]
            guard byte >= 48 && byte <= 57 && i - 2 < maxExpiryDigits else {
                throw AssetURLError.malformed("the expiry in the path is not a Unix time")
            }
            expires = expires * 10 + Int64(byte - 48)
            i += 1
        }
        guard i > 2 && i < bytes.count else {
            throw AssetURLError.malformed("the expiry in the path is not a Unix time")
        }
        let signature = (i + 1)..<(i + 1 + signatureLength)
        guard signature.upperBound < bytes.count - 1 && bytes[signature.upperBound] == UInt8(ascii: "/") else {
            throw AssetURLError.malformed("the path has no signature and key after the expiry")
        }
        return (expires, signature, signature.upperBound + 1)
    }

    /// The expiry and where the signature is in a raw query string, in one pass with the C
    /// library's `memchr` and `memcmp` (other parameters, e.g. a client's cache buster, are left alone).
    private static func queryParameters(in base: UnsafePointer<UInt8>, count: Int) throws -> (Int64, Range<Int>) {
        var expires: Int64?
        var signature: Range<Int>?
        var start = 0
        while start < count {
            let end =
                memchr(base + start, Int32(UInt8(ascii: "&")), count - start)
                .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? count
            let length = end - start
            let e = expiresPrefix.utf8CodeUnitCount
            let s = signaturePrefix.utf8CodeUnitCount
            if length >= e && memcmp(base + start, expiresPrefix.utf8Start, e) == 0 {
                guard expires == nil else {
                    throw AssetURLError.malformed("\(expiresParameter) is given more than once")
                }
                let digits = length - e
                guard digits >= 1 && digits <= maxExpiryDigits else {
                    throw AssetURLError.malformed("\(expiresParameter) is not a Unix time")
                }
                var value: Int64 = 0
                for i in (start + e)..<end {
                    let byte = base[i]
                    guard byte >= 48 && byte <= 57 else {
                        throw AssetURLError.malformed("\(expiresParameter) is not a Unix time")
                    }
                    value = value * 10 + Int64(byte - 48)
                }
                expires = value
            } else if length >= s && memcmp(base + start, signaturePrefix.utf8Start, s) == 0 {
                guard signature == nil else {
                    throw AssetURLError.malformed("\(signatureParameter) is given more than once")
                }
                signature = (start + s)..<end
            }
            start = end + 1
        }
        guard let expires, let signature else { throw AssetURLError.missing }
        return (expires, signature)
    }

    /// `s/<expires>/<signature>/`.
    static func pathSegment(expires: Int64, signature: [UInt8]) -> [UInt8] {
        var segment = Array("\(pathMarker)/\(expires)/".utf8)
        segment.append(contentsOf: signature)
        segment.append(UInt8(ascii: "/"))
        return segment
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// RFC 4648 §5 base64url, without padding.
    static func base64URL(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [
                alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)],
                alphabet[Int(n & 63)],
            ]
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
