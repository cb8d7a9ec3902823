import BlobStore
import HTTPServer

/// The answer format a Flickr call asked for: `format=rest` (XML, Flickr's default), or
/// `format=json`, wrapped in `jsonFlickrApi(…)` (or the `jsoncallback` name) unless
/// `nojsoncallback=1`.
enum FlickrFormat: Sendable, Equatable {
    /// `<?xml …?><rsp stat="ok">…</rsp>`.
    case rest
    /// JSON, inside a call of `callback` when it is not nil.
    case json(callback: String?)

    /// The format `parameters` ask for. An unknown `format` answers in XML (code 111, as Flickr);
    /// a `jsoncallback` that is not a JavaScript identifier is refused (`invalidCallback`, in JSON).
    static func parse(_ parameters: FlickrParameters) -> Result<FlickrFormat, FlickrError> {
        switch parameters["format"] ?? "rest" {
        case "rest", "":
            return .success(.rest)
        case "json":
            if let flag = parameters["nojsoncallback"], flag == "1" { return .success(.json(callback: nil)) }
            guard let name = parameters["jsoncallback"] else { return .success(.json(callback: "jsonFlickrApi")) }
            guard isIdentifier(name) else { return .failure(.invalidCallback) }
            return .success(.json(callback: name))
        case let other:
            return .failure(.formatNotFound(String(other.prefix(64))))
        }
    }

    /// Whether `name` is a plain JavaScript identifier of ASCII letters, digits, `_` and `$`, not
    /// starting with a digit, at most 64 characters: safe to write in front of `(` in a script.
    static func isIdentifier(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, !(48...57).contains(first) else { return false }
        return bytes.allSatisfy { byte in
            (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == 95
                || byte == 36
        }
    }

    /// The HTTP answer for a successful call with `entries` (`stat` is added last, as Flickr's).
    func success(_ entries: [FlickrValue.Entry]) -> HTTPResponse {
        switch self {
        case .rest:
            var out = "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<rsp stat=\"ok\">\n"
            for entry in entries { entry.value.xml(named: entry.name, into: &out) }
            out += "\n</rsp>\n"
            return Self.response(out, contentType: "text/xml; charset=utf-8", status: .ok)
        case .json(let callback):
            var out = ""
            FlickrValue.object(entries + [("stat", .string("ok"))]).json(into: &out)
            return Self.json(out, callback: callback, status: .ok)
        }
    }

    /// The HTTP answer of a successful call whose body `success(_:)` made earlier (a kept answer,
    /// `FlickrAnswerCache`): the same body, status and header fields.
    func kept(_ body: [UInt8]) -> HTTPResponse {
        let contentType: String
        switch self {
        case .rest: contentType = "text/xml; charset=utf-8"
        case .json(let callback):
            contentType = callback == nil ? "application/json; charset=utf-8" : "text/javascript; charset=utf-8"
        }
        return HTTPResponse(status: .ok, contentType: contentType, bytes: body, headers: ["Cache-Control": "no-store"])
    }

    /// The HTTP answer for `error`.
    func failure(_ error: FlickrError) -> HTTPResponse {
        let status: HTTPStatus = error.status == 200 ? .ok : error.status == 400 ? .badRequest : .serviceUnavailable
        switch self {
        case .rest:
            let message = XMLText.escaped(error.message)
            let out =
                "<?xml version=\"1.0\" encoding=\"utf-8\" ?>\n<rsp stat=\"fail\">\n"
                + "\t<err code=\"\(error.code)\" msg=\"\(message)\" />\n</rsp>\n"
            return Self.response(out, contentType: "text/xml; charset=utf-8", status: status)
        case .json(let callback):
            var out = ""
            FlickrValue.object([
                ("stat", .string("fail")), ("code", .int(error.code)), ("message", .string(error.message)),
            ])
            .json(into: &out)
            return Self.json(out, callback: error.status == 200 ? callback : nil, status: status)
        }
    }

    private static func json(_ body: String, callback: String?, status: HTTPStatus) -> HTTPResponse {
        guard let callback else {
            return response(body, contentType: "application/json; charset=utf-8", status: status)
        }
        return response(callback + "(" + body + ")", contentType: "text/javascript; charset=utf-8", status: status)
    }

    private static func response(_ body: String, contentType: String, status: HTTPStatus) -> HTTPResponse {
        HTTPResponse(
            status: status, contentType: contentType, bytes: Array(body.utf8), headers: ["Cache-Control": "no-store"])
    }
}
