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
    static func conditionalFind(
        _ request: HTTPRequest, className: String, items: [(name: String, value: String)], access: KeyChecker.Access,
        caller: ParseAccess, api: ParseAPI, context: Context
    ) throws -> HTTPResponse {
        let query = try api.findQuery(className, items: items, access: caller)
        if query.explain {
            // A plan, not the rows: no tag, never stored.
            let result = try api.findOrExplain(query)
            return HTTPResponse.json(result.json, status: result.status).notStored()
        }
        let className = query.schema.className
        // The caller is part of the tag: one user's answer (or tag) never validates another's.
        let tag = context.classChanges.current(ClassChangeSequences.dependencies(of: className)).map {
            ManifestETag.make(
                sequences: $0, className: className, items: items, access: access.rawValue,
                publicURL: context.publicURL + "\u{0}" + context.assetURLVersion, caller: caller.tagKey)
        }
        var response: HTTPResponse
        if let tag, let field = request.headers["If-None-Match"], ManifestETag.ifNoneMatch(field, matches: tag) {
            response = HTTPResponse(status: .notModified)
        } else {
            let result = try api.find(query)
            response = HTTPResponse.json(result.json, status: result.status)
        }
        if let tag { response.headers["ETag"] = tag }
        if request.method == .get {
            response.headers["Cache-Control"] = revalidateValue
            return response
        }
        return response.notStored()
    }

    /// After a write through this server: reads the sequences, so the writer's next conditional
    /// find sees its own change even before the change's notification has arrived. A failed read
    /// only delays that until the notification.
    static func writeDone(_ context: Context) {
        writeDone(context.classChanges, logger: context.logger)
    }

    /// `writeDone(_:)` with the two collaborators it uses.
    static func writeDone(_ classChanges: ClassChangeSequences, logger: Logger) {
        do {
            try classChanges.refresh()
        } catch {
            logger.notice("class change sequences not re-read after a write", metadata: ["error": "\(error)"])
        }
    }
}
