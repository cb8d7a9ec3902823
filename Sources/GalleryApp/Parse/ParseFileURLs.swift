/// How an answer writes its file URLs: the prefix every URL shares and, with a signer, the signed
/// path segment of the one expiry the whole answer uses. A class, so the encoder's closures over
/// each file field of each row capture one reference, not a copy of the encoder.
final class ParseFileURLs: Sendable {
    /// `publicURL/bucket/`, or `assetURL/` (a CDN in front of the bucket).
    let prefix: String
    private let prefixBytes: [UInt8]
    /// Signs file URLs (nil: plain URLs, `bucket_public = true`).
    private let signer: AssetURLSigner?
    /// The expiry of every URL signed here: one per answer, so its URLs agree.
    private let expires: Int64

    init(prefix: String, signer: AssetURLSigner?, expires: Int64) {
        self.prefix = prefix
        self.prefixBytes = Array(prefix.utf8)
        self.signer = signer
        self.expires = expires
    }

    /// The absolute URL of a blob key (unsafe bytes percent-encoded), signed when there is a signer.
    func url(forKey key: String) -> String {
        guard let signer else { return prefix + Self.percentEncodePath(key) }
        return prefix + String(decoding: signer.pathSegment(forKey: key, expires: expires), as: UTF8.self)
            + Self.percentEncodePath(key)
    }

    /// Writes `{"__type":"File","name":…,"url":…}` for the blob `key`.
    func writeFile(key: UnsafeBufferPointer<UInt8>, into writer: inout ParseJSONWriter) {
        writer.beginObject(type: "File")
        // The name is the key's last segment; the URL the prefix and the key, written in place.
        let nameStart = (key.lastIndex(of: UInt8(ascii: "/")) ?? -1) + 1
        writer.key(ascii: "name")
        writer.string(utf8: UnsafeBufferPointer(rebasing: key[nameStart...]))
        writer.key(ascii: "url")
        if key.allSatisfy(Self.isUnreserved) {
            writer.string(
                utf8: key, prefix: prefixBytes, infix: signer?.pathSegment(forKey: key, expires: expires) ?? [])
        } else {
            writer.string(url(forKey: String(decoding: key, as: UTF8.self)))
        }
        writer.endObject()
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "/")
    }

    private static func percentEncodePath(_ key: String) -> String {
        if key.utf8.allSatisfy(isUnreserved) { return key }
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in key.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
