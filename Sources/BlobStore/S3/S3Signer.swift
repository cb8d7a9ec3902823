import Crypto
import Foundation

/// AWS Signature Version 4 for S3 (the "Authenticating Requests" pages of the S3 API reference):
/// a canonical request, a string to sign over its SHA-256, and an HMAC-SHA256 chain
/// `AWS4<secret> → date → region → s3 → aws4_request` as the signing key.
public struct S3Signer: Sendable {
    /// The access key id.
    public let accessKeyId: String
    /// The secret access key.
    let secretAccessKey: String
    /// The region of the signature scope.
    public let region: String
    /// The service of the signature scope (always `s3` here).
    public let service = "s3"

    /// The SHA-256 of an empty payload, hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// The payload hash of presigned URLs, whose body the signer never sees.
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// A signer for these credentials and region.
    public init(accessKeyId: String, secretAccessKey: String, region: String) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.region = region
    }

    /// Signs a request in its headers: adds `x-amz-date`, `x-amz-content-sha256` and
    /// `Authorization` to `headers` (which must already hold `host` and any other header to sign).
    /// `path` is the unencoded path, `query` the unencoded query parameters.
    public func sign(
        method: String, path: String, query: [(String, String)], headers: inout [(String, String)],
        payloadHash: String, date: Date = Date()
    ) {
        let (amzDate, day) = Self.timestamps(date)
        headers.append(("x-amz-date", amzDate))
        headers.append(("x-amz-content-sha256", payloadHash))
        let canonical = Self.canonicalHeaders(headers)
        let request = [
            method, Self.encodePath(path), Self.canonicalQuery(query), canonical.text, canonical.signed, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let signature = self.signature(request: request, amzDate: amzDate, day: day, scope: scope)
        headers.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(accessKeyId)/\(scope), SignedHeaders=\(canonical.signed), Signature=\(signature)"
            ))
    }

    /// The query parameters of a presigned URL for `method` on `path` at `host`, valid for
    /// `expires` seconds (1 s to 7 days): only `host` is signed and the payload is unsigned.
    public func presignedQuery(
        method: String, host: String, path: String, query: [(String, String)] = [], expires: Int, date: Date = Date()
    ) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        var parameters = query
        parameters.append(("X-Amz-Algorithm", "AWS4-HMAC-SHA256"))
        parameters.append(("X-Amz-Credential", "\(accessKeyId)/\(scope)"))
        parameters.append(("X-Amz-Date", amzDate))
        parameters.append(("X-Amz-Expires", String(min(max(expires, 1), 604_800))))
        parameters.append(("X-Amz-SignedHeaders", "host"))
        let request = [
            method, Self.encodePath(path), Self.canonicalQuery(parameters), "host:\(host)\n", "host",
            Self.unsignedPayload,
        ].joined(separator: "\n")
        parameters.append(("X-Amz-Signature", signature(request: request, amzDate: amzDate, day: day, scope: scope)))
        return parameters
    }

    private func signature(request: String, amzDate: String, day: String, scope: String) -> String {
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Array(request.utf8))),
        ].joined(separator: "\n")
        var key = SymmetricKey(data: Array(("AWS4" + secretAccessKey).utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return Self.hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    /// Lower-case names, values with outer spaces trimmed and inner runs of spaces collapsed,
    /// sorted by name; returns the canonical block (each line ending in `\n`) and the signed list.
    static func canonicalHeaders(_ headers: [(String, String)]) -> (text: String, signed: String) {
        var normalized: [(String, String)] = headers.map { name, value -> (String, String) in
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            let collapsed = trimmed.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            return (name.lowercased(), collapsed)
        }
        normalized.sort { (a: (String, String), b: (String, String)) -> Bool in a.0 < b.0 }
        let text = normalized.map { pair in pair.0 + ":" + pair.1 + "\n" }.joined()
        return (text, normalized.map { pair in pair.0 }.joined(separator: ";"))
    }

    /// Parameters percent-encoded (RFC 3986 unreserved kept), sorted by name then value, `&`-joined.
    static func canonicalQuery(_ query: [(String, String)]) -> String {
        let encoded: [(String, String)] = query.map { pair in
            (encode(pair.0, keepSlash: false), encode(pair.1, keepSlash: false))
        }
        let sorted = encoded.sorted { (a: (String, String), b: (String, String)) -> Bool in
            a.0 == b.0 ? a.1 < b.1 : a.0 < b.0
        }
        return sorted.map { pair in pair.0 + "=" + pair.1 }.joined(separator: "&")
    }

    /// A path percent-encoded once (S3 does not double-encode), `/` kept.
    public static func encodePath(_ path: String) -> String { encode(path, keepSlash: true) }

    /// Percent-encodes UTF-8 bytes outside `A-Z a-z 0-9 - _ . ~` (and `/` when kept), upper-case hex.
    public static func encode(_ text: String, keepSlash: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let hexDigits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == 0x2F) {
                out.append(byte)
            } else {
                out.append(0x25)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0xF)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986 unreserved characters: `A-Z a-z 0-9 - _ . ~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x5F, 0x2E, 0x7E: return true
        default: return false
        }
    }

    /// `yyyyMMdd'T'HHmmss'Z'` and `yyyyMMdd` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ v: Int?) -> String {
            let v = v ?? 0
            return v < 10 ? "0\(v)" : String(v)
        }
        let day = String(c.year ?? 1970) + two(c.month) + two(c.day)
        return (day + "T" + two(c.hour) + two(c.minute) + two(c.second) + "Z", day)
    }

    /// Lower-case hex of a digest or any byte sequence.
    public static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
