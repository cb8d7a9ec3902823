import Foundation
import HTTPServer
import Logging

/// Flickr's REST endpoint, `GET` or form `POST` on `/services/rest/` (with or without the slash):
/// reads the call's arguments, its format (`FlickrFormat`), key and caller, and answers the
/// method (`FlickrAPI`) as Flickr does, errors included (HTTP 200 with `stat="fail"`).
///
/// Keys: `api_key`, or OAuth's `oauth_consumer_key` (an argument, or in the `Authorization: OAuth`
/// header where `flickrapi` signs its calls), is the Parse application id; its OAuth signature is not checked (galleryd has no consumer secrets). A call
/// without `X-Parse-Session-Token` sees public photos only; with one, what that user may read.
struct FlickrRoutes: Sendable {
    /// The methods.
    let api: FlickrAPI
    /// Session tokens to users.
    let sessions: SessionAuthenticator
    /// The Parse application id, which `api_key` must equal.
    let appID: String
    let logger: Logger

    /// Registers `GET` and `POST` on `/services/rest` and `/services/rest/`.
    func register(on router: HTTPRouter) {
        let routes = self
        for path in ["/services/rest", "/services/rest/"] {
            for method in [HTTPMethod.get, .post] {
                router.add(
                    HTTPRoute(
                        method, path, maxBodyBytes: FlickrParameters.maxBodyBytes, mayBlock: true,
                        handler: HTTPClosureHandler { request in routes.answer(request) }))
            }
        }
    }

    /// The answer to one call; never throws (every failure is a Flickr error).
    func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard let parameters = FlickrParameters(request) else {
            return FlickrFormat.rest.failure(
                FlickrError(code: 2, message: "Arguments are not valid percent-encoding", status: 400))
        }
        let format: FlickrFormat
        switch FlickrFormat.parse(parameters) {
        case .success(let parsed): format = parsed
        case .failure(let error): return (error.status == 200 ? FlickrFormat.rest : .json(callback: nil)).failure(error)
        }
        do {
            let key =
                parameters["api_key"] ?? parameters["oauth_consumer_key"]
                ?? FlickrParameters.oauthParameter("oauth_consumer_key", in: request.headers["Authorization"])
            guard let key, Self.equal(key, appID) else {
                throw FlickrError.invalidAPIKey
            }
            let caller: ParseCaller
            do {
                caller = try sessions.caller(request, access: .client)
            } catch is ParseError {
                throw FlickrError.invalidAuthToken
            }
            return format.success(try api.call(parameters["method"] ?? "", parameters, caller: caller))
        } catch let error as FlickrError {
            return format.failure(error)
        } catch {
            logger.error("flickr call failed", metadata: ["request": "\(request.requestID)", "error": "\(error)"])
            return format.failure(FlickrError(code: 105, message: "Service currently unavailable", status: 503))
        }
    }

    /// Whether `a` equals `b`, in time that does not depend on where they differ.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
