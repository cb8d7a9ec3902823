/// A failed Flickr call, answered as Flickr does (`{"stat":"fail","code":N,"message":"…"}` or
/// `<rsp stat="fail"><err code="N" msg="…" /></rsp>`, HTTP 200), with Flickr's codes.
struct FlickrError: Error, Sendable, Equatable {
    /// Flickr's error code.
    var code: Int
    /// Flickr's message.
    var message: String
    /// The HTTP status: 200 as Flickr answers its API errors, 400 for a request that cannot be
    /// answered in the asked format at all (a bad `jsoncallback`).
    var status = 200

    /// 1: the photo does not exist or the caller may not see it (the same answer, so ids do not leak).
    static let photoNotFound = FlickrError(code: 1, message: "Photo not found")
    /// 1 of the photoset methods.
    static let photosetNotFound = FlickrError(code: 1, message: "Photoset not found")
    /// 1 of the people methods.
    static let userNotFound = FlickrError(code: 1, message: "User not found")
    /// 3 of `flickr.photos.search` without any filter.
    static let parameterlessSearch = FlickrError(
        code: 3, message: "Parameterless searches have been disabled. Please use flickr.photos.getRecent instead.")
    /// 98: an `X-Parse-Session-Token` that logs nobody in.
    static let invalidAuthToken = FlickrError(code: 98, message: "Invalid auth token")
    /// Flickr's 96: an OAuth signature that is not the call's (`flickr_api_secret` set).
    static let invalidSignature = FlickrError(code: 96, message: "Invalid signature")
    /// Flickr's 97: OAuth parameters without a signature (`flickr_api_secret` set).
    static let missingSignature = FlickrError(code: 97, message: "Missing signature")
    /// 100: missing or wrong `api_key` / `oauth_consumer_key`.
    static let invalidAPIKey = FlickrError(code: 100, message: "Invalid API Key (Key has invalid format)")

    /// 2 (Flickr's "missing required argument" family): a required parameter absent.
    static func missingArgument(_ name: String) -> FlickrError {
        FlickrError(code: 2, message: "Required parameter \(name) missing")
    }

    /// 111: a `format` other than `json` and `rest`.
    static func formatNotFound(_ format: String) -> FlickrError {
        FlickrError(code: 111, message: "Format \"\(format)\" not found")
    }

    /// 112: a method galleryd does not implement.
    static func methodNotFound(_ method: String) -> FlickrError {
        FlickrError(code: 112, message: "Method \"\(method)\" not found")
    }

    /// A `jsoncallback` that is not a JavaScript identifier: a 400, never echoed into a script.
    static let invalidCallback = FlickrError(
        code: 114,
        message: "Invalid jsoncallback: a JavaScript identifier ([A-Za-z_$][A-Za-z0-9_$]*, up to 64 characters)",
        status: 400)
}
