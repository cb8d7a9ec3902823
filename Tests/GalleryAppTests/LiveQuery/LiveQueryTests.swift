import Foundation
import Testing

@testable import GalleryApp

/// LiveQuery: `where` evaluated in the server per event, the op a change means to a subscription,
/// and the whole protocol end to end with an independent client (PyPI `websockets`).
struct LiveQueryTests {
    private func row(_ fields: [String: Any]) -> [String: Any] {
        var row: [String: Any] = [
            "object_id": "abc", "created_at": "2026-11-23T06:00:00.123+00:00",
            "updated_at": "2026-11-23T06:00:01+00:00",
            "title": "Beach at noon", "status": "pending", "width": 160, "tags": ["sea", "sun"], "deleted_at": NSNull(),
            "taken_at": "2020-01-02T03:04:05+00:00", "original_key": "originals/x.jpg",
        ]
        for (key, value) in fields { row[key] = value }
        return row
    }

    private func matcher(_ json: String) throws -> LiveQueryMatcher {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        return try LiveQueryMatcher.compile(object, schema: .photo)
    }

    @Test func matcher_EvaluatesSupportedOperators() throws {
        let r = row([:])
        #expect(try matcher(#"{"title":"Beach at noon"}"#).matches(r))
        #expect(try !matcher(#"{"title":"Beach"}"#).matches(r))
        #expect(try matcher(#"{"tags":"sea"}"#).matches(r))
        #expect(try matcher(#"{"status":{"$in":["pending","ready"]}}"#).matches(r))
        #expect(try !matcher(#"{"status":{"$nin":["pending"]}}"#).matches(r))
        #expect(try !matcher(#"{"status":{"$ne":"pending"}}"#).matches(r))
        #expect(try matcher(#"{"width":{"$gt":100,"$lte":160}}"#).matches(r))
        #expect(try !matcher(#"{"width":{"$lt":160}}"#).matches(r))
        #expect(try matcher(#"{"takenAt":{"$lt":{"__type":"Date","iso":"2021-01-01T00:00:00.000Z"}}}"#).matches(r))
        #expect(try matcher(#"{"title":{"$regex":"^Beach"}}"#).matches(r))
        #expect(try !matcher(#"{"title":{"$regex":"^Noon"}}"#).matches(r))
        #expect(try matcher(#"{"dominantColor":{"$exists":false}}"#).matches(r))
        #expect(try matcher(#"{"$or":[{"status":"ready"},{"width":160}]}"#).matches(r))
        // Trashed rows are hidden unless the query names deletedAt, as in find.
        let trashed = row(["deleted_at": "2026-11-23T07:00:00+00:00"])
        #expect(try !matcher("{}").matches(trashed))
        #expect(try matcher(#"{"deletedAt":{"$exists":true}}"#).matches(trashed))
    }

    @Test(arguments: [
        #"{"title":{"$text":{"$search":"x"}}}"#, #"{"title":{"$regex":"Beach"}}"#, #"{"title":{"$regex":"^a.*b"}}"#,
        #"{"title":{"$regex":"^a","$options":"i"}}"#, #"{"nope":1}"#, #"{"width":"wide"}"#, #"{"$nor":[]}"#,
        #"{"tags":{"$all":["a"]}}"#,
    ])
    func matcher_RefusesUnsupported(json: String) {
        #expect(throws: LiveQueryError.self) { try matcher(json) }
    }

    @Test func subscription_TellsCreateUpdateEnterLeaveDelete() throws {
        let subscription = LiveQuerySubscription(
            requestId: 1, schema: .photo, matcher: try matcher(#"{"status":"ready"}"#), keys: nil)
        func op(_ operation: LiveQueryEvent.Operation, _ old: [String: Any]?, _ new: [String: Any]?) -> String? {
            subscription.operation(for: LiveQueryEvent(schema: .photo, operation: operation, old: old, new: new))
        }
        let pending = row([:])
        let ready = row(["status": "ready"])
        let trashed = row(["status": "ready", "deleted_at": "2026-11-23T07:00:00+00:00"])
        #expect(op(.insert, nil, ready) == "create")
        #expect(op(.insert, nil, pending) == nil)
        #expect(op(.update, pending, ready) == "enter")
        #expect(op(.update, ready, ready) == "update")
        #expect(op(.update, ready, trashed) == "leave")
        #expect(op(.update, trashed, ready) == "enter")
        #expect(op(.update, pending, pending) == nil)
        #expect(op(.delete, ready, nil) == "delete")
        #expect(op(.delete, trashed, nil) == nil)
    }

    @Test func event_DecodesTriggerPayload_AndWritesParseObject() throws {
        let payload =
            #"{"className":"Photo","op":"insert","old":null,"new":{"object_id":"abc","created_at":"2026-11-23T06:00:00.123+00:00","title":"t","original_key":"originals/x.jpg","taken_at":"2020-01-02T03:04:05+00:00","width":3}}"#
        let event = try #require(LiveQueryEvent.decode(payload).event)
        #expect(event.operation == .insert)
        let object = event.parseObject(
            event.new!, keys: nil, encoder: ParseObjectEncoder(publicURL: "http://h", bucket: "b"))
        #expect(object["className"] as? String == "Photo")
        #expect(object["createdAt"] as? String == "2026-11-23T06:00:00.123Z")
        #expect((object["takenAt"] as? [String: Any])?["__type"] as? String == "Date")
        #expect((object["original"] as? [String: Any])?["__type"] as? String == "File")
        #expect(
            LiveQueryEvent.decode(#"{"className":"Photo","op":"update","truncated":true,"objectId":"x"}"#).event == nil)
        #expect(LiveQueryEvent.decode("not json").event == nil)
    }

    @Test func liveQueryPath_MovesTheUpgrade_AndThePageIsToldWhere() throws {
        let server = try TestServer(workers: 0, listening: true) { $0.liveQueryPath = "/live" }
        defer { server.stop() }
        func upgrade(_ path: String) throws -> Int {
            let client = try RawHTTPClient(port: server.application.port)
            client.send(
                "GET \(path) HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
            return try client.readResponse(bodyless: true).status
        }
        #expect(try upgrade("/live") == 101)
        #expect(try upgrade("/parse") != 101)
        let config = try server.request("GET", "/web/config.json").json
        #expect(config["livePath"] as? String == "/live")
        #expect(config["mountPath"] as? String == "/parse")
    }

    /// The independent client: PyPI `websockets` (installed by scripts/test.sh into its virtualenv)
    /// runs Tests/e2e/live_query_e2e.py against a real server with a worker.
    @Test func endToEnd_WebsocketsClient_SeesCreateAndReadyUpdate() throws {
        let server = try TestServer(workers: 1, listening: true)
        defer { server.stop() }
        #expect(server.application.liveQuery.waitUntilListening(timeout: 10))
        let jpegPath = NSTemporaryDirectory() + "live-\(UUID().uuidString).jpg"
        try Data(try TestJPEG.make(width: 160, height: 120, seed: 5)).write(to: URL(fileURLWithPath: jpegPath))
        defer { try? FileManager.default.removeItem(atPath: jpegPath) }
        let run = try runLiveQueryScript(
            "live_query_e2e.py", [server.baseURL, TestServer.appID, jpegPath, TestServer.masterKey])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("\"ok\": true"), "\(run.output)")
        #expect(server.application.liveQuery.eventsDelivered >= 2)
    }
}
