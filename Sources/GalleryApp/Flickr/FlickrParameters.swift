import Foundation
import HTTPServer

/// The arguments of one Flickr call: the query string's, then a form-encoded POST body's
/// (`flickrapi` posts its calls), the first value of a name winning.
struct FlickrParameters: Sendable {
    /// Every argument in order, as sent (`flickr.test.echo` returns them).
    private(set) var items: [(name: String, value: String)] = []

    /// The largest form body read (a Flickr call is a few hundred bytes of arguments).
    static let maxBodyBytes = 64 << 10

    /// The arguments of `request`; nil when the query or the form body is not valid
    /// percent-encoding.
    init?(_ request: HTTPRequest) {
        guard let query = request.queryItems() else { return nil }
        items = query
        let type = request.headers["Content-Type"]?.lowercased() ?? ""
        if request.method == .post, type.hasPrefix("application/x-www-form-urlencoded") || type.isEmpty {
            guard let body = try? request.body.data(), let form = Self.decode(String(decoding: body, as: UTF8.self))
            else {
                return nil
            }
            items += form
        }
    }

    /// Arguments given directly (tests, and calls made from others).
    init(_ items: [(name: String, value: String)]) {
        self.items = items
    }

    /// The first value of `name`.
    subscript(name: String) -> String? {
        items.first { $0.name == name }?.value
    }

    /// The first value of `name` when it is not empty.
    func nonEmpty(_ name: String) -> String? {
        guard let value = self[name], !value.isEmpty else { return nil }
        return value
    }

    /// A parameter of an OAuth 1.0a `Authorization: OAuth k="v", …` header (RFC 5849 §3.5.1,
    /// values percent-encoded), where `flickrapi` sends `oauth_consumer_key`; nil when absent.
    static func oauthParameter(_ name: String, in header: String?) -> String? {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "oauth " else { return nil }
        for part in header.dropFirst(6).split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0] == name else { continue }
            var value = Substring(pair[1])
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
            return String(value).removingPercentEncoding
        }
        return nil
    }

    /// `a=b&c=d` (`+` a space) as pairs; nil when a part is not valid percent-encoding.
    static func decode(_ text: String) -> [(name: String, value: String)]? {
        try? HTTPQueryString.decode(text)
    }
}
