import Crypto
import Foundation

/// The `secret` and `originalsecret` of Flickr's photo URLs: per-photo capabilities, HMAC-SHA256
/// of the photo id under the URL-signing key, 10 hex digits as Flickr's. The display sizes share
/// one secret, so a client's suffix replacement (`_m` → `_t`, `_h`) names another size of a photo
/// it was shown; the original has its own. They do not expire: whoever was handed a photo's URL may
/// fetch its sizes until the key changes (docs/decisions/034-flickr-api.md).
struct FlickrSecrets: Sendable {
    /// HMAC-SHA256 keyed once (the key padded and hashed into its inner and outer states): each
    /// MAC continues a copy of it, as a page of photos MACs every id.
    private let keyed: KeyedHMAC

    /// `HMAC<SHA256>` is not declared `Sendable`; unchecked because it is only ever copied, never
    /// mutated in place, and its hashers are copy-on-write (swift-crypto's `OpenSSLDigestImpl`).
    private struct KeyedHMAC: @unchecked Sendable {
        let hmac: HMAC<SHA256>
    }

    /// Secrets under `key` (`url_signing_key`).
    init(key: String) {
        keyed = KeyedHMAC(hmac: HMAC<SHA256>(key: SymmetricKey(data: Array(key.utf8))))
    }

    /// The secret of every display size of photo `id`.
    func secret(photoId id: String) -> String { mac("galleryd-flickr-v1\n" + id) }

    /// The secret of the original of photo `id`.
    func originalSecret(photoId id: String) -> String { mac("galleryd-flickr-original-v1\n" + id) }

    /// Whether `secret` is photo `id`'s for `original` or the display sizes, compared in constant time.
    func verify(_ secret: String, photoId id: String, original: Bool) -> Bool {
        let expected = Array((original ? originalSecret(photoId: id) : self.secret(photoId: id)).utf8)
        let given = Array(secret.utf8)
        guard given.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<expected.count { difference |= expected[index] ^ given[index] }
        return difference == 0
    }

    /// HMAC-SHA256 of `message`, its first 5 bytes as 10 lower-case hex digits.
    private func mac(_ message: String) -> String {
        var hmac = keyed.hmac
        hmac.update(data: Array(message.utf8))
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(10)
        for byte in hmac.finalize().prefix(5) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }
}
