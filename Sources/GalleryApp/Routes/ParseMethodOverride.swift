import HTTPServer

/// What Parse SDKs put in a JSON body besides the object itself (Parse Server's
/// `allowMethodOverride` and `handleParseHeaders`):
/// - `"_method": "GET"` turns a `POST` into a query whose parameters are the body's other members,
///   for a `where` too large for a URL; `"PUT"` and `"DELETE"` likewise;
/// - `_ApplicationId`, `_JavaScriptKey` and `_MasterKey` carry the keys, so a browser can send
///   `text/plain` without headers and skip a CORS preflight. They count only when the request has
///   no `X-Parse-Application-Id` header.
/// The SDKs' other bookkeeping members (`_ClientVersion`, `_InstallationId`, …) are dropped.
struct ParseMethodOverride {
    /// The method to run instead of POST (upper case), or nil to create.
    let method: String?
    /// The keys the body carries.
    let keys: KeyChecker.Keys
    /// The body's `_SessionToken` (the JavaScript SDK's), used when there is no session header.
    var sessionToken: String? = nil
    /// The body without the underscore members, for create and update.
    let body: [UInt8]
    /// The remaining members as query parameters, for GET: strings as they are, other values as JSON text.
    let queryItems: [(name: String, value: String)]

    /// The members the SDKs add; any other key starting with `_` is left for the object's validation.
    static let bookkeeping: Set<String> = [
        "_method", "_ApplicationId", "_JavaScriptKey", "_MasterKey", "_ClientVersion", "_InstallationId",
        "_SessionToken", "_RevocableSession", "_ContentType", "_context",
    ]

    /// The override in `body`, or nil when it has none of the SDK members (an ordinary create body,
    /// which is then parsed once, by the create).
    static func parse(_ body: [UInt8], maxDepth: Int) throws -> ParseMethodOverride? {
        guard mayContainBookkeeping(body) else { return nil }
        guard case .object(let object) = try ParseJSONParser.parse(body, maxDepth: maxDepth + 3) else { return nil }
        guard object.keys.contains(where: bookkeeping.contains) else { return nil }
        var method: String?
        if let value = object["_method"] {
            guard case .string(let name) = value else { throw ParseError.invalidJSON("_method must be a string.") }
            method = name.uppercased()
        }
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let text) = value else { throw ParseError.invalidJSON("\(key) must be a string.") }
            return text
        }
        let keys = KeyChecker.Keys(
            appID: try string("_ApplicationId"), restKey: try string("_JavaScriptKey"),
            masterKey: try string("_MasterKey"))
        var rest = ParseJSONObject()
        var items: [(name: String, value: String)] = []
        for member in object.members where !bookkeeping.contains(member.key) {
            rest.members.append(member)
            if case .string(let text) = member.value {
                items.append((member.key, text))
            } else {
                var writer = ParseJSONWriter()
                writer.value(member.value)
                items.append((member.key, String(decoding: writer.bytes, as: UTF8.self)))
            }
        }
        var writer = ParseJSONWriter()
        writer.value(.object(rest))
        return ParseMethodOverride(
            method: method, keys: keys, sessionToken: try string("_SessionToken"), body: writer.bytes, queryItems: items
        )
    }

    /// Whether `"_` occurs at all: bodies without it are left alone without a second parse.
    private static func mayContainBookkeeping(_ body: [UInt8]) -> Bool {
        guard body.count >= 2 else { return false }
        for i in 0..<(body.count - 1) where body[i] == UInt8(ascii: "\"") && body[i + 1] == UInt8(ascii: "_") {
            return true
        }
        return false
    }

    /// The GET parameters: the URL's query first (Parse Server lets it win), then the body's members.
    func queryItems(mergedWith url: [(name: String, value: String)]) -> [(name: String, value: String)] {
        let named = Set(url.map(\.name))
        return url + queryItems.filter { !named.contains($0.name) }
    }
}
