import Foundation
import HTTPServer

/// Cross-origin resource sharing for the API and the bucket (the Fetch standard's CORS protocol):
/// any origin by default (every call still needs the keys), or the configured list, echoing the
/// request's `Origin` with `Vary: Origin`. The Parse mount grants on every answer, as Parse Server's
/// `allowCrossDomain` does; the bucket only to requests that carry an `Origin`, as S3 and MinIO do,
/// with `Vary: Origin` on every answer so that no cache hands a grant-less answer to a CORS request
/// (the Fetch standard's CORS-and-caches example; decision 041, round 10).
public struct CORSPolicy: Sendable {
    /// Allowed origins (`https://photos.example`); empty with `allowsAnyOrigin`.
    public let origins: [String]
    /// Whether `*` was configured.
    public let allowsAnyOrigin: Bool
    /// Which answers carry the grant.
    public let scope: Scope
    /// The `Access-Control-Expose-Headers` value of this policy's answers.
    let exposedHeadersValue: String

    /// Which answers carry the CORS fields.
    public enum Scope: Sendable {
        /// Every answer, whether the request has an `Origin` or not (the Parse mount: Parse Server).
        case everyAnswer
        /// Only answers to requests with an allowed `Origin`, every answer saying `Vary: Origin` (the
        /// bucket: S3 and MinIO send no CORS fields to a request without `Origin`).
        case requestsWithOrigin
    }

    /// Every header Parse SDKs (JavaScript, iOS/Swift, Android, .NET, Flutter) send, the standard
    /// request headers a browser asks about, and galleryd's own `X-Gallery-Simulate`.
    public static let allowedHeaders = [
        "X-Parse-Application-Id", "X-Parse-REST-API-Key", "X-Parse-Javascript-Key", "X-Parse-Client-Key",
        "X-Parse-Windows-Key", "X-Parse-Master-Key", "X-Parse-Maintenance-Key", "X-Parse-Session-Token",
        "X-Parse-Revocable-Session", "X-Parse-Installation-Id", "X-Parse-Client-Version", "X-Parse-OS-Version",
        "X-Parse-App-Build-Version", "X-Parse-App-Display-Version", "X-Parse-Request-Id", "X-Parse-Cloud-Context",
        "X-Parse-Upload-Mode", "X-Requested-With", "X-HTTP-Method-Override", "X-Gallery-Simulate",
        "Content-Type", "Authorization", "Cache-Control", "Pragma", "Range", "If-Match", "If-None-Match",
        "If-Modified-Since", "If-Unmodified-Since", "If-Range",
    ]
    /// Response headers scripts may read: paging, caching, ranges, retries and created objects.
    public static let exposedHeaders = [
        "Location", "ETag", "Last-Modified", "Content-Range", "Accept-Ranges", "Content-Length", "Retry-After",
        "X-Parse-Job-Status-Id", "X-Parse-Push-Status-Id",
    ]
    /// What the bucket's answers expose: `exposedHeaders` less Parse's job and push status ids, which
    /// only the Parse mount's job and push answers carry.
    public static let bucketExposedHeaders = exposedHeaders.filter { !$0.hasPrefix("X-Parse-") }
    /// `allowedHeaders` as a header value, joined once rather than per answer.
    static let allowedHeadersValue = allowedHeaders.joined(separator: ", ")
    /// Methods the API and the bucket answer.
    public static let allowedMethods = "GET, HEAD, POST, PUT, DELETE, OPTIONS"
    /// How long a browser may cache a preflight answer, in seconds (Chromium caps it at 2 hours).
    public static let preflightMaxAge = 86_400

    /// A policy from the `cors_origins` setting (`*`, or origins separated by commas): the Parse
    /// mount's (every answer, `exposedHeaders`) or the bucket's (`requestsWithOrigin`,
    /// `bucketExposedHeaders`).
    public init(configured: String, scope: Scope = .everyAnswer) {
        let list = configured.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        allowsAnyOrigin = list.contains("*")
        origins = allowsAnyOrigin ? [] : list.map { Self.normalized($0) }
        self.scope = scope
        exposedHeadersValue = (scope == .everyAnswer ? Self.exposedHeaders : Self.bucketExposedHeaders)
            .joined(separator: ", ")
    }

    /// Why a `cors_origins` value is unusable, or nil: each entry is `*` or `scheme://host[:port]`.
    static func problem(inOrigins value: String) -> String? {
        let list = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if list.isEmpty { return "must be * or a comma-separated list of origins" }
        for origin in list where origin != "*" {
            guard origin.hasPrefix("http://") || origin.hasPrefix("https://") else {
                return "\(origin) is not an origin (http://host[:port] or https://host[:port])"
            }
            let rest = origin.drop { $0 != "/" }.dropFirst(2)
            if rest.isEmpty || rest.dropLast(rest.hasSuffix("/") ? 1 : 0).contains("/") {
                return "\(origin) is not an origin: no path allowed"
            }
        }
        return nil
    }

    /// The `Access-Control-Allow-Origin` value for a request, or nil when its origin is not allowed
    /// (or, with `requestsWithOrigin`, when it has none).
    public func allowedOrigin(for request: HTTPRequest) -> String? {
        if allowsAnyOrigin, scope == .everyAnswer { return "*" }
        guard let origin = request.headers["Origin"] else { return nil }
        if allowsAnyOrigin { return "*" }
        return origins.contains(Self.normalized(origin)) ? origin : nil
    }

    /// Adds the headers of an actual (non-preflight) response.
    public func decorate(_ response: inout HTTPResponse, for request: HTTPRequest) {
        if allowsAnyOrigin, scope == .everyAnswer {
            // The mount's default: the same two fields whatever the request, with no look at its
            // `Origin` (each set is one scan of the answer's fields by name length).
            response.headers["Access-Control-Allow-Origin"] = "*"
            response.headers["Access-Control-Expose-Headers"] = exposedHeadersValue
            return
        }
        // The answer depends on the request's `Origin` (its presence, or its value): said to caches
        // on every answer, granted or not.
        response.headers.add("Vary", "Origin")
        guard let origin = allowedOrigin(for: request) else { return }
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Expose-Headers"] = exposedHeadersValue
    }

    /// The answer to a preflight `OPTIONS` request: 204 with the allowed methods and headers,
    /// decided from the request's headers alone (no database, no keys: browsers send none).
    public func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var response = HTTPResponse(status: .noContent)
        response.headers["Allow"] = Self.allowedMethods
        if !allowsAnyOrigin || scope == .requestsWithOrigin { response.headers.add("Vary", "Origin") }
        guard let origin = allowedOrigin(for: request) else { return response }
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Methods"] = Self.allowedMethods
        response.headers["Access-Control-Allow-Headers"] = Self.allowedHeadersValue
        response.headers["Access-Control-Max-Age"] = String(Self.preflightMaxAge)
        return response
    }

    /// Origins compare without a trailing slash and case-insensitively (RFC 6454 §6.1 serializes
    /// scheme and host in lower case).
    private static func normalized(_ origin: String) -> String {
        var value = origin.lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}
