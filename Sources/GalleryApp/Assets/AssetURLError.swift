/// Why the bucket endpoint refused an asset URL: each is `403 AccessDenied` in S3's XML
/// (`S3ErrorResponder`), logged with the reason, before the store is touched.
public enum AssetURLError: Error, Equatable, CustomStringConvertible {
    /// No `s/<expires>/<signature>/` in the path, nor `X-Gallery-Expires` and `X-Gallery-Signature`
    /// in the query (a plain URL while `bucket_public = false`).
    case missing
    /// A path segment or parameter that cannot be a signed URL's (not digits, given twice).
    case malformed(String)
    /// The signature does not match the path and expiry (tampered, or signed with another key).
    case signatureMismatch
    /// A correctly signed URL whose expiry (Unix seconds) has passed.
    case expired(Int64)
    /// An expiry (Unix seconds) later than any URL this server issues could carry (window plus
    /// validity from now): refused whatever its signature.
    case expiryTooLate(Int64)
    /// `bucket_public = false` without a usable `url_signing_key`: nothing can be verified, so
    /// nothing is served (`serve` refuses to start this way; only an embedding can get here).
    case noSigningKey

    public var description: String {
        switch self {
        case .missing:
            return
                "no signature in the path nor \(AssetURLSigner.expiresParameter) and \(AssetURLSigner.signatureParameter)"
        case .malformed(let reason): return "malformed signed URL: \(reason)"
        case .signatureMismatch: return "signature does not match"
        case .expired(let expires): return "signed URL expired at \(expires)"
        case .expiryTooLate(let expires): return "signed URL expires at \(expires), later than this server issues"
        case .noSigningKey: return "no url_signing_key configured"
        }
    }
}
