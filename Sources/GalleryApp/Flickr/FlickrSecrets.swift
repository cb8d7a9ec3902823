import Crypto
import Foundation

/// The `secret` and `originalsecret` of Flickr's photo URLs: per-photo capabilities, HMAC-SHA256
/// of the photo id under the URL-signing key, 10 hex digits as Flickr's. The display sizes share
/// one secret, so a client's suffix replacement (`_m` → `_t`, `_h`) names another size of a photo
/// it was shown; the original has its own. They do not expire: whoever was handed a photo's URL may
/// fetch its sizes until the key changes (docs/decisions/034-flickr-api.md).
struct FlickrSecrets: Sendable {
    /// The key's bytes (swift-crypto's `SymmetricKey` is not `Sendable`; one is made per MAC).
    private let key: [UInt8]

    /// Secrets under `key` (`url_signing_key`).
    init(key: String) {
        self.key = Array(key.utf8)
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

    private func mac(_ message: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: SymmetricKey(data: key))
        return code.prefix(5).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
