import Foundation
import HTTPServer

/// Administration of the processing queue under the Parse mount (master key only):
/// `POST /jobs/retry` re-queues failed photos, named (`{"photos":["id",…]}`) or all of them
/// (`{"status":"failed"}`), and answers `{"requeued":N,"photos":[…]}`.
struct ParseJobRoutes {
    /// The queue whose failed jobs are re-queued (it re-reads the change sequences after a retry:
    /// re-queued photos are pending again, a visible change).
    let jobs: JobQueue
    /// The Parse mount (`/parse`) and the body's JSON nesting limit.
    let mountPath: String, maxJSONDepth: Int
    let keys: KeyChecker

    /// Registers the route through `routes` (the mount's group), behind the master key.
    func register(on routes: HTTPRouteGroup) {
        let (jobs, depth) = (jobs, maxJSONDepth)
        routes.group(ParseKeyMiddleware(.master, keys: keys)).add(
            HTTPRoute(.post, mountPath + "/jobs/retry") { request in
                let ids = try Self.photoIds(try ParseRoutes.body(request), maxDepth: depth)
                let requeued = try jobs.requeueFailed(photoIds: ids)
                var json = ParseJSONWriter()
                json.beginObject()
                json.key("requeued")
                json.int(Int64(requeued.count))
                json.key("photos")
                json.beginArray()
                for id in requeued { json.string(id) }
                json.endArray()
                json.endObject()
                return .json(json.bytes, status: .ok)
            })
    }

    /// The photos a retry body names, or nil for every failed photo (`{"status":"failed"}`).
    static func photoIds(_ body: [UInt8], maxDepth: Int) throws -> [String]? {
        guard let object = try ParseJSONParser.parse(body, maxDepth: maxDepth).objectValue else {
            throw ParseError.invalidJSON("The body must be a JSON object.")
        }
        for key in object.keys where key != "photos" && key != "status" {
            throw ParseError.invalidKeyName("Unknown key \(key.prefix(50)): use photos or status.")
        }
        if let status = object["status"] {
            guard status.stringValue == "failed", object["photos"] == nil else {
                throw ParseError.invalidJSON(#"Use {"status":"failed"} or {"photos":["objectId",…]}."#)
            }
            return nil
        }
        guard case .array(let values)? = object["photos"], !values.isEmpty, values.count <= 1000 else {
            throw ParseError.invalidJSON(
                #"photos must be an array of 1 to 1000 objectIds, or send {"status":"failed"}."#)
        }
        return try values.map { value in
            guard let id = value.stringValue, ParseObjectID.isPlausible(id) else {
                throw ParseError.invalidJSON("photos must hold objectIds (strings).")
            }
            return id
        }
    }
}
