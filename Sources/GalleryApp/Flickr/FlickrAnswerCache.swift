import HTTPServer

/// Kept Flickr answers, as the Parse find keeps its pages (docs/decisions/007 and 040): the
/// rendered answer of a read-only call, kept under a key made of everything it depends on — the
/// change sequences of galleries, their items and photos, the caller, the public URL, the answer
/// format and the call's other arguments, normalized (first value of each name, sorted, the key
/// and OAuth's per-call nonce and signature left out). A write anywhere moves a sequence (this
/// server's own at once, `ClassChangeSequences.refreshAfterWrite`; another instance's by
/// `NOTIFY`), so the next call makes another key and runs again.
///
/// The bodies share the manifest's bounded store (`ManifestCache`, `manifest_cache_bytes`, least
/// recently used out first), and its gzip form is made once and kept beside the body. The key is
/// read *before* the call runs, so a kept body is never older than its key says. While the
/// sequences are unknown (listener down) nothing is read or kept.
struct FlickrAnswerCache: Sendable {
    /// Where the bodies are kept.
    let bodies: ManifestCache
    /// The sequences a key is made of.
    let classChanges: ClassChangeSequences
    /// The server's public URL, which every photo URL of an answer starts with.
    let publicURL: @Sendable () -> String

    /// The change sequences every kept method reads: class-wide, so any write to a gallery, an item
    /// or a photo (ACL and trash included) changes every key.
    static let dependencies = ["Gallery", "GalleryItem", "Photo"]

    /// The methods whose answers are kept: those that read galleries and photos only.
    /// (`flickr.test.echo` answers its arguments, nonce included: never worth keeping.)
    static let keptMethods: Set<String> = [
        "flickr.photos.search", "flickr.photos.getRecent", "flickr.photos.getInfo", "flickr.photos.getSizes",
        "flickr.people.getPublicPhotos", "flickr.photosets.getList", "flickr.photosets.getPhotos",
    ]

    /// Arguments that do not change an answer: the key (checked equal to the app id before any
    /// lookup), the format's (the format is in the key, parsed), and the per-call ones of signed calls.
    static func isIgnored(_ name: String) -> Bool {
        name == "api_key" || name == "format" || name == "nojsoncallback" || name == "jsoncallback"
            || name == "api_sig" || name.hasPrefix("oauth_")
    }

    /// Calls with longer normalized arguments are not kept (a kept key stays small).
    static let maxArgumentBytes = 2048

    /// The key of the answer to `parameters` for `caller` in `format` now, or nil when it is not
    /// kept: a method not kept, arguments too long, or the sequences unknown.
    func key(_ parameters: FlickrParameters, format: FlickrFormat, caller: ParseCaller) -> String? {
        guard bodies.keepsBodies, let method = parameters["method"], Self.keptMethods.contains(method),
            let arguments = Self.normalized(parameters), let sequences = classChanges.current(Self.dependencies)
        else { return nil }
        let who: String
        switch caller {
        case .master: who = "master"
        case .user(let id): who = "user:" + id
        case .anonymous: who = "anonymous"
        }
        let shape: String
        switch format {
        case .rest: shape = "rest"
        case .json(let callback): shape = "json:" + (callback ?? "")
        }
        var key = "flickr\n" + who + "\n" + shape + "\n" + publicURL() + "\n"
        key += sequences.map { String($0) }.joined(separator: ",") + "\n" + arguments
        return key
    }

    /// The arguments that decide an answer, one line each (`<name length>:<name><value>`, so no
    /// name or value can pass for another), sorted; nil when too long to keep.
    static func normalized(_ parameters: FlickrParameters) -> String? {
        var seen = Set<String>()
        var lines: [String] = []
        var bytes = 0
        for item in parameters.items where !isIgnored(item.name) && seen.insert(item.name).inserted {
            bytes += item.name.utf8.count + item.value.utf8.count
            guard bytes <= maxArgumentBytes else { return nil }
            lines.append(String(item.name.utf8.count) + ":" + item.name + item.value)
        }
        return lines.sorted().joined(separator: "\n")
    }

    /// The kept answer under `key` in `format`, or nil. `mayCompress` (off the event loop) makes
    /// and keeps the gzip form a client that takes gzip gets; without it, such a client gets nil
    /// until that form is kept.
    func answer(_ key: String, format: FlickrFormat, request: HTTPRequest, mayCompress: Bool) -> HTTPResponse? {
        guard let kept = bodies.body(for: key) else { return nil }
        var response = format.kept(kept.body)
        guard kept.body.count > HTTPGzip.minimumBytes, HTTPGzip.accepts(request.headers) else { return response }
        var gzip = kept.gzip
        if gzip == nil {
            guard mayCompress else { return nil }
            if let made = HTTPGzip.compress(kept.body) {
                bodies.storeGzip(made, for: key)
                gzip = made
            }
        }
        if let gzip, gzip.count < kept.body.count {
            response.body = .bytes(gzip)
            response.headers["Content-Encoding"] = "gzip"
            response.headers["Vary"] = "Accept-Encoding"
        }
        return response
    }

    /// Keeps the body of `response`, a successful answer made after `key` was read.
    func keep(_ response: HTTPResponse, under key: String) {
        guard case .bytes(let body) = response.body else { return }
        bodies.store(body, for: key)
    }
}
