import Foundation
import Logging
import Testing

@testable import GalleryApp

/// Every 403 of the JavaScript SDK's JSON upload logs its reason once, at notice (the answer is
/// Parse Server's `{"error":"unauthorized"}` whatever the reason), and never a key's or session
/// token's value. The application logs to a `CapturingLogHandler` at notice, as `serve` does by
/// default; every refusal comes before the database, so `InProcessServer` serves them.
@Suite struct UploadJSONFileLogTests {
    static let jsKey = "test-js-key-\(UUID().uuidString)"
    static let token = "r:secret-session-token-\(UUID().uuidString)"
    static let wrongKey = "wrong-key-\(UUID().uuidString)"
    /// Values no log line may hold.
    static let secrets = [TestServer.masterKey, jsKey, token, wrongKey]

    /// A JSON upload body: a small base64, then the members given, in order, as raw JSON text.
    static func body(_ members: [(String, String)]) -> Data {
        let rest = members.map { ", \"\($0.0)\": \($0.1)" }.joined()
        return Data("{\"base64\": \"iVBORw0KGgo=\", \"fileData\": {\"metadata\": {}}\(rest)}".utf8)
    }

    static func quoted(_ text: String) -> String { "\"\(text)\"" }

    @Test func everyRefusal_LogsItsReasonOnce_AndNoSecret() throws {
        let capture = CapturingLogHandler()
        let server = try InProcessServer(logger: capture.logger("galleryd", level: .notice)) {
            $0.restKey = Self.jsKey
        }
        defer { server.stop() }
        let app = ("_ApplicationId", Self.quoted(TestServer.appID))
        let js = ("_JavaScriptKey", Self.quoted(Self.jsKey))
        let session = ("_SessionToken", Self.quoted(Self.token))
        let master = ("_MasterKey", Self.quoted(TestServer.masterKey))
        let long = Self.quoted(Self.wrongKey + String(repeating: "k", count: 5000))
        let cases: [(name: String, body: Data, contentType: String, reason: String)] = [
            (
                "wrong application id", Self.body([("_ApplicationId", Self.quoted(Self.wrongKey)), js, session]),
                "text/plain;charset=UTF-8", "the JSON upload's _ApplicationId is not this application's"
            ),
            (
                "wrong JavaScript key", Self.body([app, ("_JavaScriptKey", Self.quoted(Self.wrongKey)), session]),
                "text/plain", "the JSON upload's _JavaScriptKey is missing or wrong"
            ),
            (
                "no JavaScript key", Self.body([app, session]), "text/plain",
                "the JSON upload's _JavaScriptKey is missing or wrong"
            ),
            (
                "no application id", Self.body([js, session, master]), "text/plain",
                "the JSON upload has no _ApplicationId"
            ),
            (
                "duplicate key member", Self.body([app, js, master, ("_MasterKey", Self.quoted(Self.wrongKey))]),
                "text/plain", "invalid JSON: duplicate key _MasterKey at byte"
            ),
            (
                "duplicate base64", Self.body([app, js, ("base64", Self.quoted("AAAA"))]), "application/json",
                "invalid JSON: duplicate key base64 at byte"
            ),
            (
                "over-long application id", Self.body([("_ApplicationId", long), js]), "text/plain",
                "the JSON upload's _ApplicationId is too long"
            ),
            (
                "over-long master key", Self.body([app, js, ("_MasterKey", long)]), "text/plain",
                "the JSON upload's _MasterKey is too long"
            ),
            (
                "key member not a string", Self.body([("_ApplicationId", "5"), js]), "text/plain",
                "the JSON upload's _ApplicationId is not a string"
            ),
            (
                "not JSON", Data("{\"_MasterKey\": \"\(TestServer.masterKey)\", \"base64\": }".utf8), "text/plain",
                "invalid JSON: unexpected character at byte"
            ),
            (
                "not a JSON object", Data("base64=\(Self.token)".utf8), "text/plain",
                "no X-Parse-Application-Id header, and the body is not a JSON object"
            ),
            (
                "not a JSON upload's type", Self.body([app, js, master]), "image/png",
                "no X-Parse-Application-Id header, and not a JSON upload's Content-Type"
            ),
        ]
        for item in cases {
            let before = capture.lines.count
            let response = server.request(
                "POST", "/parse/files/photo.png", body: item.body, headers: ["Content-Type": item.contentType],
                appID: nil)
            #expect(response.status == 403, "\(item.name)")
            #expect(response.text == "{\"error\":\"unauthorized\"}", "\(item.name)")
            let lines = Array(capture.lines[before...])
            let refusals = lines.filter { $0.hasPrefix("unauthorized ") }
            #expect(refusals.count == 1, "\(item.name): \(lines)")
            #expect(refusals.first?.contains("reason=\(item.reason)") == true, "\(item.name): \(lines)")
            #expect(refusals.first?.contains("path=/parse/files/photo.png") == true, "\(item.name): \(lines)")
            for line in lines {
                #expect(!Self.secrets.contains { line.contains($0) }, "\(item.name) logged a secret: \(line)")
            }
        }
        #expect(capture.events.withLock { $0.allSatisfy { $0.level == .notice } })
        // The same keys and session, right: no refusal (the session is checked in the database, which
        // this server has not: a 5xx, logged without them).
        let before = capture.lines.count
        _ = server.request(
            "POST", "/parse/files/photo.png", body: Self.body([app, js, session]),
            headers: ["Content-Type": "text/plain"], appID: nil)
        #expect(!capture.lines[before...].contains { $0.hasPrefix("unauthorized") })
        #expect(!capture.lines.contains { line in Self.secrets.contains { line.contains($0) } })
    }
}
