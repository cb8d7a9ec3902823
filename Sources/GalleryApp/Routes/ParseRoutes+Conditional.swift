import HTTPServer
import Logging

extension ParseRoutes {
    /// `Cache-Control` of a find's GET answers: any cache may keep them for this user only and must
    /// revalidate each time (with `If-None-Match`), which costs a 304 without a query.
    static let revalidateValue = "private, no-cache"

    /// A find or count with its `ETag` (`ManifestETag`), answered 304 without running the query
    /// when `If-None-Match` names the current tag (RFC 9110 §13.1.2). The tag comes from the
    /// in-memory change sequences, read before the query so it is never newer than the rows
    /// returned; while they are unknown (listener down) the answer has no tag and there is no 304.
    /// A POST with `_method: GET` gets the same tag and 304, and keeps `Cache-Control: no-store`.
    ///
    /// With a `cacheKey` (a GET: its raw query string) the tag's inputs are remembered after the
    /// first compile, and an answer rendered under a tag is kept and served for that tag without
    /// PostgreSQL (`ManifestCache`).
    static func conditionalFind(
        _ request: HTTPRequest, className: String, items: [(name: String, value: String)], access: KeyChecker.Access,
        caller: ParseAccess, api: ParseAPI, context: Context, cacheKey: ManifestCache.QueryKey? = nil
    ) throws -> HTTPResponse {
        let cache = context.manifestCache
        var query: ParseQuery?
        let inputs: ManifestCache.TagInputs
        // The tag kept with the query string's inputs when it is still current (as `inlineFind`
        // takes it): no digest, no text, no sequence array per find (docs/decisions/057).
        var keptTag: ManifestCache.KnownTag?
        if let cacheKey, let known = keptInputs(cacheKey, context: context) {
            inputs = known.inputs
            keptTag = known.tag
        } else {
            let compiled = try api.findQuery(className, items: items, access: caller)
            guard !compiled.explain, let dependencies = ClassChangeSequences.dependencies(of: compiled) else {
                // A plan, or rows no sequence tracks: no tag, never stored.
                let result = try api.findOrExplain(compiled)
                return HTTPResponse.json(result.json, status: result.status).notStored()
            }
            // The route's class (a view's rows are Photo's, its answers its own), the rows' sequences.
            inputs = ManifestCache.TagInputs(
                className: className, dependencies: dependencies,
                items: ManifestETag.normalized(items))
            if let cacheKey { cache.remember(inputs, for: cacheKey) }
            query = compiled
        }
        // The caller is part of the tag: one user's answer (or tag) never validates another's.
        let tag = (keptTag ?? makeTag(inputs, access: access, caller: caller, context: context, keepFor: cacheKey))?
            .value
        var response: HTTPResponse
        if let tag, let field = request.headers["If-None-Match"], ManifestETag.ifNoneMatch(field, matches: tag) {
            response = HTTPResponse(status: .notModified)
        } else if let tag, let kept = cache.body(for: tag) {
            response = cachedAnswer(kept, tag: tag, request: request, cache: cache)
        } else {
            let result = try api.find(try query ?? api.findQuery(className, items: items, access: caller))
            // Stored only under a tag read before the query ran: the rows are at least that new.
            if let tag, result.status == .ok { cache.store(result.json, for: tag) }
            response = HTTPResponse.json(result.json, status: result.status)
        }
        if let tag { response.headers["ETag"] = tag }
        if request.method == .get {
            response.headers["Cache-Control"] = revalidateValue
            return response
        }
        return response.notStored()
    }

    /// The answer to a GET find or count decided on the event loop (`HTTPRoute.inlineAnswer`):
    /// a 304, or a 200 with a kept body, when everything it takes is in memory — the keys, a
    /// remembered session, the query string's tag inputs, the sequences and, for a 200, the body
    /// (in gzip form if the client takes gzip). Anything else (nil) goes to the handler pool.
    ///
    /// While the sequences, the public URL and the signing window are as they were when the query
    /// string's tag was last made, the tag kept with its inputs is used as it is (`KnownTag`): a
    /// 304 then makes no digest, no text and no header values, and compares bytes.
    static func inlineFind(_ request: HTTPRequest, keys: KeyChecker, context: Context) -> HTTPResponse? {
        guard request.method == .get else { return nil }
        // Without kept bodies only a 304 can be given here: anything else goes to the pool at once.
        guard context.manifestCache.keepsBodies || request.headers["If-None-Match"] != nil else { return nil }
        let access = keys.access(request)
        guard access >= .client, let caller = context.sessions.rememberedCaller(request, access: access),
            let className = request.pathParameters["className"],
            let cacheName = context.api.views.keptCacheName(className), let stamp = context.classChanges.stamp(),
            let parseAccess = context.sessions.roles.rememberedAccess(
                for: caller, publicRead: context.configuration.publicRead)
        else { return nil }
        let key = ManifestCache.QueryKey(
            className: cacheName, query: request.query ?? "", access: access.rawValue, caller: parseAccess.tagKey)
        let version = ManifestCache.TagVersion(
            stamp: stamp, publicURL: context.publicURL, assetWindow: context.assetURLWindow)
        guard let found = context.manifestCache.lookUp(key, version: version),
            let tag = found.tag
                ?? makeTag(found.inputs, access: access, caller: parseAccess, context: context, keepFor: key)
        else { return nil }
        if let field = request.headers["If-None-Match"], tag.isNamed(by: field) {
            return HTTPResponse(status: .notModified, headers: tag.headers)
        }
        guard let kept = context.manifestCache.body(for: tag.value),
            kept.gzip != nil || !HTTPGzip.accepts(request.headers)
        else { return nil }
        var response = cachedAnswer(kept, tag: tag.value, request: request, cache: context.manifestCache)
        for field in tag.headers { response.headers.add(field.name, field.value) }
        return response
    }

    /// The tag inputs remembered for a query string, with the tag kept beside them when it was
    /// made for the sequences, public URL and signing window of now (else nil: make it).
    private static func keptInputs(
        _ key: ManifestCache.QueryKey, context: Context
    ) -> (inputs: ManifestCache.TagInputs, tag: ManifestCache.KnownTag?)? {
        guard let stamp = context.classChanges.stamp() else {
            guard let inputs = context.manifestCache.tagInputs(key) else { return nil }
            return (inputs, nil)
        }
        let version = ManifestCache.TagVersion(
            stamp: stamp, publicURL: context.publicURL, assetWindow: context.assetURLWindow)
        return context.manifestCache.lookUp(key, version: version)
    }

    /// The tag of an answer with these inputs now, or nil while the sequences are unknown; kept
    /// with the query string's inputs (`keepFor`) under the version it was made for, which is read
    /// in the same look as the sequences, so a kept tag is never older than its version says.
    private static func makeTag(
        _ inputs: ManifestCache.TagInputs, access: KeyChecker.Access, caller: ParseAccess, context: Context,
        keepFor key: ManifestCache.QueryKey?
    ) -> ManifestCache.KnownTag? {
        guard let read = context.classChanges.currentStamped(inputs.dependencies) else { return nil }
        let publicURL = context.publicURL
        let window = context.assetURLWindow
        let value = ManifestETag.make(
            sequences: read.sequences, className: inputs.className, normalizedItems: inputs.items,
            access: access.rawValue,
            publicURL: publicURL + "\u{0}" + GalleryApplication.assetURLVersion(window: window),
            caller: caller.tagKey)
        let tag = ManifestCache.KnownTag(value, cacheControl: revalidateValue)
        if let key {
            context.manifestCache.keep(
                tag, version: ManifestCache.TagVersion(stamp: read.stamp, publicURL: publicURL, assetWindow: window),
                for: key)
        }
        return tag
    }

    /// A kept body as a 200: gzip-coded for a client that takes gzip (the coded form made once and
    /// kept beside the body), as the server's own content coding would answer it.
    private static func cachedAnswer(
        _ kept: (body: [UInt8], gzip: [UInt8]?), tag: String, request: HTTPRequest, cache: ManifestCache
    ) -> HTTPResponse {
        var response = HTTPResponse.json(kept.body)
        guard kept.body.count > HTTPGzip.minimumBytes, HTTPGzip.accepts(request.headers) else { return response }
        var gzip = kept.gzip
        if gzip == nil, let made = HTTPGzip.compress(kept.body) {
            cache.storeGzip(made, for: tag)
            gzip = made
        }
        if let gzip, gzip.count < kept.body.count {
            response.body = .bytes(gzip)
            response.headers["Content-Encoding"] = "gzip"
            response.headers["Vary"] = "Accept-Encoding"
        }
        return response
    }
}
