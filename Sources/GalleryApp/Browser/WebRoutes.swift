import Foundation
import HTTPServer

/// The web gallery and the API description: `/` (the page), `/web/<file>` (its modules, styles
/// and icons, plain files from `web_root`), `/web/config.json` (what the page needs to call the
/// API: the application id and mount, whether a REST key is needed and sign-up is open; never a
/// key, and nothing of who may read what) and `/openapi.json`.
struct WebRoutes {
    /// The directory the files are served from.
    let root: String
    /// The Parse mount path, for the page's config.
    let mountPath: String
    /// Where the page opens its LiveQuery WebSocket.
    let livePath: String
    /// The application id, which every client sends and is not a secret.
    let appID: String
    /// Whether a REST key is configured: the page then asks its user for it (it is never served).
    let restKeyRequired: Bool
    /// Whether anyone with the app's keys may sign up (`signup_open`): the login form then links to sign-up.
    let signupOpen: Bool
    /// The page's `Content-Security-Policy` (`SecurityHeaders.pagePolicy`), asked on each load
    /// (the public URL is known once the port is bound).
    let pagePolicy: @Sendable () -> String

    /// Registers the routes; files are a stat and a sendfile, so they run on the event loop.
    func register(on router: HTTPRouter) {
        let root = self.root
        let pagePolicy = self.pagePolicy
        router.add(
            HTTPRoute(.get, "/", mayBlock: false) { request in
                var page = try Self.file("index.html", root: root, request)
                page.headers["Content-Security-Policy"] = pagePolicy()
                return page
            })
        router.add(
            HTTPRoute(.get, "/openapi.json", mayBlock: false) { request in
                try Self.file("openapi.json", root: root, request)
            })
        router.add(
            HTTPRoute(.get, "/web/*file", mayBlock: false) { request in
                try Self.file(request.pathParameters["file"] ?? "", root: root, request)
            })
        let appID = appID
        let mountPath = mountPath
        let livePath = livePath
        let restKeyRequired = restKeyRequired
        let signupOpen = signupOpen
        // Only what the page needs to call the API; it says nothing of who may read what: every
        // page starts at its login form until it holds a valid session.
        router.add(
            HTTPRoute(.get, "/web/config.json", mayBlock: false) { _ in
                var json = ParseJSONWriter()
                json.beginObject()
                json.key("appId")
                json.string(appID)
                json.key("mountPath")
                json.string(mountPath)
                json.key("livePath")
                json.string(livePath)
                json.key("restKeyRequired")
                json.bool(restKeyRequired)
                json.key("signupOpen")
                json.bool(signupOpen)
                json.endObject()
                var response = HTTPResponse.json(json.bytes)
                response.headers["Cache-Control"] = "no-cache"
                return response
            })
    }

    /// Answers a file below the root with validators (so reloads are 304s), or 404 for names that
    /// leave the root, are hidden, or do not exist.
    static func file(_ name: String, root: String, _ request: HTTPRequest) throws -> HTTPResponse {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.isEmpty, !name.contains("\0"), !parts.contains(where: { $0.isEmpty || $0.hasPrefix(".") }) else {
            throw HTTPError(.notFound, "not found")
        }
        let path = root + "/" + name
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw HTTPError(.notFound, "not found")
        }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
        let file = HTTPFileResponse.File(
            path: path, size: Int(info.st_size),
            etag: "\"\(String(info.st_mtim.tv_sec, radix: 16))-\(String(info.st_size, radix: 16))\"",
            lastModified: modified, contentType: contentType(name))
        return HTTPFileResponse.make(for: request, file: file, headers: ["Cache-Control": "no-cache"])
    }

    /// The media type by extension; JavaScript modules must be served as JavaScript to load.
    static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last?.lowercased() ?? "" {
        case "html": return "text/html; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "json": return "application/json; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "ico": return "image/x-icon"
        default: return "application/octet-stream"
        }
    }

    /// The web root: the configured one, or the first `web/` holding `index.html` that
    /// `ResourceDirectory` finds.
    static func directory(configured: String) -> String {
        ResourceDirectory.find("web", marker: "index.html", configured: configured)
    }
}
