import Foundation
import HTTPServer

/// The security policy headers of galleryd's answers. Every answer (API, bucket, errors) carries
/// `defaults`: no MIME sniffing, no `Referer` (a signed asset URL must not leak to another site
/// through it), and a policy that lets no document load anything or be framed. The web page
/// replaces that policy with `pagePolicy`, which allows exactly what the page in `web/` loads:
/// its own modules and styles (no inline script or style element), photos from the server and
/// the asset host, the API and LiveQuery on its own origin.
enum SecurityHeaders {
    /// What no answer may be framed by (clickjacking) nor load: an API answer is no document.
    static let apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    /// Added by the server to every answer that does not set the field itself.
    static let defaults: HTTPHeaders = [
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Content-Security-Policy": apiPolicy,
    ]

    /// The web page's policy: scripts and styles only from its own files (element styles the
    /// modules set through CSSOM need no `'unsafe-inline'`), images from the server and the asset
    /// host (`public_asset_url`), `blob:` and `data:` images (the ThumbHash placeholders the grid paints
    /// before a thumbnail arrives are `data:` PNGs; an image cannot run script), API calls and the LiveQuery socket to its own origin (and the
    /// public URL's `ws`/`wss` origin, for browsers whose `'self'` leaves WebSockets out).
    static func pagePolicy(publicURL: String, assetURLPrefix: String) -> String {
        let server = origin(publicURL)
        let assets = origin(assetURLPrefix)
        let images = ["'self'", server, assets, "blob:", "data:"].compactMap { $0 }
        var connect = ["'self'"]
        if let components = URLComponents(string: publicURL), let host = components.host, origin(publicURL) != nil {
            let port = components.port.map { ":\($0)" } ?? ""
            let bracketed = host.contains(":") ? "[\(host)]" : host
            connect.append((components.scheme == "https" ? "wss://" : "ws://") + bracketed + port)
        }
        return
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src \(Set(images).sorted().joined(separator: " ")); "
            + "connect-src \(connect.joined(separator: " ")); manifest-src 'self'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'"
    }

    /// `scheme://host[:port]` of an http(s) URL, or nil when it is not one or holds characters a
    /// policy cannot carry.
    static func origin(_ url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" })
        else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return scheme + "://" + bracketed + (components.port.map { ":\($0)" } ?? "")
    }
}
