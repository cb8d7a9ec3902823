/// Why the bucket endpoint refused an asset URL: each is `403 AccessDenied` in S3's XML
/// (`S3ErrorResponder`), logged with the reason, before the store is touched.
public enum AssetURLError: Error, Equatable, CustomStringConvertible {
    /// No `X-Gallery-Expires` and `X-Gallery-Signature` (a plain URL while `bucket_public = false`).
    case missing
    /// A parameter that cannot be a signed URL's (not digits, given twice).
    case malformed(String)
    /// The signature does not match the path and expiry (tampered, or signed with another key).
    case signatureMismatch
    /// A correctly signed URL whose expiry (Unix seconds) has passed.
    case expired(Int64)
    /// `bucket_public = false` without a usable `url_signing_key`: nothing can be verified, so
    /// nothing is served (`serve` refuses to start this way; only an embedding can get here).
    case noSigningKey

    public var description: String {
        switch self {
        case .missing: return "no \(AssetURLSigner.expiresParameter) and \(AssetURLSigner.signatureParameter)"
        case .malformed(let reason): return "malformed signed URL: \(reason)"
        case .signatureMismatch: return "signature does not match"
        case .expired(let expires): return "signed URL expired at \(expires)"
        case .noSigningKey: return "no url_signing_key configured"
        }
    }
}
