import Foundation
import HTTPServer
import Logging

/// Flickr's REST endpoint, `GET` or form `POST` on `/services/rest/` (with or without the slash):
/// reads the call's arguments, its format (`FlickrFormat`), key and caller, and answers the
/// method (`FlickrAPI`) as Flickr does, errors included (HTTP 200 with `stat="fail"`).
///
/// Keys: `api_key`, or OAuth's `oauth_consumer_key` (an argument, or in the `Authorization: OAuth`
/// header where `flickrapi` signs its calls), is the Parse application id. With `flickr_api_secret`
/// set, a call that carries OAuth parameters must be signed with it (`FlickrOAuth`: 96, 97);
/// without it signatures are not checked. A call without `X-Parse-Session-Token` sees public
/// photos only; with one, what that user may read.
///
/// Read-only answers are kept (`FlickrAnswerCache`) and, when everything is in memory, answered on
/// the event loop as the Parse find's kept pages are (an unsigned call only: a signature is
/// checked on the pool).
struct FlickrRoutes: Sendable {
    /// The methods.
    let api: FlickrAPI
    /// Session tokens to users.
    let sessions: SessionAuthenticator
    /// The Parse application id, which `api_key` must equal.
    let appID: String
    /// Checks OAuth signatures; nil without `flickr_api_secret` (not checked).
    let oauth: FlickrOAuth?
    /// Kept answers; nil keeps none.
    let answers: FlickrAnswerCache?
    let logger: Logger

    /// Registers `GET` and `POST` on `/services/rest` and `/services/rest/`.
    func register(on router: HTTPRouter) {
        let routes = self
        var inline: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil
        if answers != nil { inline = { @Sendable request in routes.inlineAnswer(request) } }
        for path in ["/services/rest", "/services/rest/"] {
            for method in [HTTPMethod.get, .post] {
                router.add(
                    HTTPRoute(
                        method, path, maxBodyBytes: FlickrParameters.maxBodyBytes, mayBlock: true,
                        inlineAnswer: inline, handler: HTTPClosureHandler { request in routes.answer(request) }))
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
            guard let key = Self.apiKey(request, parameters), Self.equal(key, appID) else {
                throw FlickrError.invalidAPIKey
            }
            try checkSignature(request, parameters)
            let caller: ParseCaller
            do {
                caller = try sessions.caller(request, access: .client)
            } catch is ParseError {
                throw FlickrError.invalidAuthToken
            }
            // The key is read before the call runs: a body kept under it is never older than it says.
            let kept = answers?.key(parameters, format: format, caller: caller)
            if let kept, let answers,
                let response = answers.answer(kept, format: format, request: request, mayCompress: true)
            {
                return response
            }
            let response = format.success(try api.call(parameters["method"] ?? "", parameters, caller: caller))
            if let kept { answers?.keep(response, under: kept) }
            return response
        } catch let error as FlickrError {
            return format.failure(error)
        } catch {
            logger.error("flickr call failed", metadata: ["request": "\(request.requestID)", "error": "\(error)"])
            return format.failure(FlickrError(code: 105, message: "Service currently unavailable", status: 503))
        }
    }

    /// A kept answer to a `GET` given on the event loop (`HTTPRoute.inlineAnswer`) when all it takes
    /// is in memory: the right key, no OAuth signature to check, no session or a remembered one, and the
    /// body (in gzip form for a client that takes gzip). Anything else (nil) goes to the pool.
    func inlineAnswer(_ request: HTTPRequest) -> HTTPResponse? {
        guard let answers, request.method == .get, let parameters = FlickrParameters(request),
            case .success(let format) = FlickrFormat.parse(parameters),
            let key = Self.apiKey(request, parameters), Self.equal(key, appID),
            !parameters.items.contains(where: { $0.name.hasPrefix("oauth_") }),
            request.headers["Authorization"] == nil,
            let caller = sessions.rememberedCaller(request, access: .client),
            let kept = answers.key(parameters, format: format, caller: caller)
        else { return nil }
        return answers.answer(kept, format: format, request: request, mayCompress: false)
    }

    /// The app id a call names: `api_key`, else OAuth's `oauth_consumer_key` (argument or header).
    static func apiKey(_ request: HTTPRequest, _ parameters: FlickrParameters) -> String? {
        parameters["api_key"] ?? parameters["oauth_consumer_key"]
            ?? FlickrParameters.oauthParameter("oauth_consumer_key", in: request.headers["Authorization"])
    }

    /// Throws Flickr's 96, 97 or 98 when `flickr_api_secret` is set and the call's OAuth signature
    /// is wrong, missing or made with a token; an unsigned `api_key` call passes.
    private func checkSignature(_ request: HTTPRequest, _ parameters: FlickrParameters) throws {
        guard let oauth else { return }
        let uris = FlickrOAuth.baseURIs(request, publicURL: api.urls.publicURL())
        switch oauth.verify(request, parameters: parameters, baseURIs: uris) {
        case .unsigned, .valid: return
        case .missing: throw FlickrError.missingSignature
        case .invalid: throw FlickrError.invalidSignature
        case .unknownToken: throw FlickrError.invalidAuthToken
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
