import Crypto
import Foundation
import HTTPServer

/// OAuth 1.0a signatures of Flickr calls (RFC 5849), checked when `flickr_api_secret` is set:
/// `flickrapi` signs every call with HMAC-SHA1 under the consumer secret and an empty token
/// secret (galleryd issues no OAuth tokens). Without a configured secret no signature is checked
/// (docs/decisions/040). Not checked: timestamps and nonces (a replayed read-only call answers
/// what its first sending already got).
struct FlickrOAuth: Sendable {
    /// The consumer secret (`flickr_api_secret`), the secret half of the app's Flickr key.
    let consumerSecret: String

    /// What a call's OAuth parameters say.
    enum Verdict: Equatable, Sendable {
        /// No OAuth at all (PhotoViewer's `api_key` call): nothing to check.
        case unsigned
        /// Signed, and the signature is right.
        case valid
        /// OAuth parameters without `oauth_signature`: Flickr's 97.
        case missing
        /// A wrong signature or an unsupported method: Flickr's 96.
        case invalid
        /// Signed with a user's token, which galleryd never issued: Flickr's 98.
        case unknownToken
    }

    /// The verdict on `request` with its arguments `parameters`; `baseURIs` are the URIs the client
    /// may have signed (RFC 5849 §3.4.1.2: scheme, host, port and path), any one of which will do.
    func verify(_ request: HTTPRequest, parameters: FlickrParameters, baseURIs: [String]) -> Verdict {
        let all = parameters.items + Self.headerParameters(request.headers["Authorization"])
        guard let signature = all.first(where: { $0.name == "oauth_signature" })?.value else {
            return all.contains { $0.name.hasPrefix("oauth_") } ? .missing : .unsigned
        }
        if let token = all.first(where: { $0.name == "oauth_token" })?.value, !token.isEmpty { return .unknownToken }
        guard all.first(where: { $0.name == "oauth_signature_method" })?.value == "HMAC-SHA1" else { return .invalid }
        let normalized = Self.normalizedParameters(all.filter { $0.name != "oauth_signature" })
        for uri in baseURIs {
            let base = request.method.rawValue.uppercased() + "&" + Self.encode(uri) + "&" + Self.encode(normalized)
            if FlickrRoutes.equal(sign(base), signature) { return .valid }
        }
        return .invalid
    }

    /// HMAC-SHA1 of `base` under the consumer secret and an empty token secret, base64 (§3.4.2).
    func sign(_ base: String) -> String {
        let key = SymmetricKey(data: Array((Self.encode(consumerSecret) + "&").utf8))
        return Data(HMAC<Insecure.SHA1>.authenticationCode(for: Array(base.utf8), using: key)).base64EncodedString()
    }

    /// The parameters, encoded, sorted by name then value and joined (§3.4.1.3.2).
    static func normalizedParameters(_ items: [(name: String, value: String)]) -> String {
        items.map { (encode($0.name), encode($0.value)) }
            .sorted { $0.0 == $1.0 ? Array($0.1.utf8).lexicographicallyPrecedes($1.1.utf8) : $0.0 < $1.0 }
            .map { $0.0 + "=" + $0.1 }
            .joined(separator: "&")
    }

    /// RFC 3986 percent-encoding of UTF-8 as OAuth wants it (§3.6): all but `A-Z a-z 0-9 - . _ ~`.
    static func encode(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 65...90, 97...122, 48...57, 45, 46, 95, 126: out.append(byte)
            default: out += [37, digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The parameters of an `Authorization: OAuth k="v", …` header (§3.5.1), decoded, without
    /// `realm`; empty when the header is absent or not OAuth.
    static func headerParameters(_ header: String?) -> [(name: String, value: String)] {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "oauth " else { return [] }
        var items: [(name: String, value: String)] = []
        for part in header.dropFirst(6).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0] != "realm" else { continue }
            var value = Substring(pair[1])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            guard let name = pair[0].removingPercentEncoding, let decoded = String(value).removingPercentEncoding
            else { continue }
            items.append((name, decoded))
        }
        return items
    }

    /// The base string URIs a client may have signed for `request` (§3.4.1.2): the server's
    /// public URL with the request's path, and the `Host` the client named under either scheme
    /// (a proxy in front may change the scheme). Scheme and host lower-cased, default ports left out.
    static func baseURIs(_ request: HTTPRequest, publicURL: String) -> [String] {
        let path = String(request.target.prefix { $0 != "?" })
        var uris: [String] = []
        if let split = publicURL.range(of: "://") {
            let scheme = publicURL[..<split.lowerBound].lowercased()
            let authority = publicURL[split.upperBound...].prefix { $0 != "/" }
            uris.append(uri(scheme: scheme, authority: String(authority), path: path))
        }
        if let host = request.headers["Host"], !host.isEmpty {
            for scheme in ["http", "https"] { uris.append(uri(scheme: scheme, authority: host, path: path)) }
        }
        return uris
    }

    private static func uri(scheme: String, authority: String, path: String) -> String {
        var host = authority.lowercased()
        if (scheme == "http" && host.hasSuffix(":80")) || (scheme == "https" && host.hasSuffix(":443")) {
            host = String(host[..<host.lastIndex(of: ":")!])
        }
        return scheme + "://" + host + path
    }
}
