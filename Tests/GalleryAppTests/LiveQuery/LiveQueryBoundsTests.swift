import Foundation
import Testing

@testable import GalleryApp

/// Runs one of the LiveQuery end-to-end scripts (PyPI `websockets`) in Tests/e2e with `arguments`;
/// returns its exit status and output.
func runLiveQueryScript(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let python = try #require(
        ProcessInfo.processInfo.environment["GALLERYD_TEST_PYTHON"],
        "GALLERYD_TEST_PYTHON is not set: run the tests with scripts/test.sh (make test), which installs `websockets`")
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("e2e/\(name)").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
}

/// LiveQuery's bounds: `connect` in time, subscriptions per socket, the REST caps on `where`, and
/// sockets per address, through a real WebSocket client; and the `where` caps without one.
@Suite(.serialized) struct LiveQueryBoundsTests {
    @Test func webSocketClient_MeetsEveryBound() throws {
        let server = try TestServer(workers: 0, listening: true) {
            $0.liveQueryConnectTimeoutMs = 1500
            $0.liveQueryMaxSubscriptions = 3
            $0.liveQueryMaxSocketsPerAddress = 4
        }
        defer { server.stop() }
        let user = try server.makeUser("lq-bounds")
        let run = try runLiveQueryScript(
            "live_query_bounds_e2e.py", [server.baseURL, TestServer.appID, user.token, "3", "1.5", "4"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("\"ok\": true"), "\(run.output)")
        // Every socket of the script is gone again.
        let deadline = Date().addingTimeInterval(10)
        while server.application.liveQuery.clientCount > 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(server.application.liveQuery.clientCount == 0)
    }

    @Test func withoutASession_OnlyWhatTheAccessRulesLetItReadMayBeSubscribedTo() {
        let anonymous = ParseAccess(caller: .anonymous)
        let publicReader = ParseAccess(caller: .anonymous, publicRead: true)
        for className in ["Photo", "Gallery", "GalleryItem"] {
            #expect(!LiveQuerySubscription.mayEverRead(className, by: anonymous))
            #expect(LiveQuerySubscription.mayEverRead(className, by: ParseAccess(caller: .user(objectId: "u"))))
            #expect(LiveQuerySubscription.mayEverRead(className, by: .master))
        }
        #expect(LiveQuerySubscription.mayEverRead("Photo", by: publicReader))  // a photo whose ACL gives `*` read
        #expect(LiveQuerySubscription.mayEverRead("Gallery", by: publicReader))
        #expect(LiveQuerySubscription.mayEverRead("GalleryItem", by: publicReader))
    }

    @Test func whereCaps_AreTheRESTCaps() throws {
        var limits = ParseLimits()
        limits.maxInListCount = 3
        limits.maxJSONDepth = 4
        limits.maxConditions = 5
        limits.maxStringValueBytes = 10
        limits.maxWhereBytes = 100
        limits.maxRegexLength = 4
        func refused(_ json: String) -> Bool {
            let object = try! JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
            return (try? LiveQueryMatcher.check(object, limits: limits)) == nil
        }
        #expect(!refused(#"{"title":{"$in":["a","b","c"]},"tags":"x"}"#))
        #expect(refused(#"{"title":{"$in":["a","b","c","d"]}}"#))
        #expect(refused(#"{"tags":{"$all":["a","b","c","d"]}}"#))
        #expect(refused(#"{"$or":[{"$or":[{"$or":[{"title":"x"}]}]}]}"#))
        #expect(refused(#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}"#))
        #expect(refused(#"{"title":"01234567890"}"#))
        #expect(refused(#"{"title":{"$regex":"^abcde"}}"#))
        // Within every other cap, but over 100 bytes as JSON.
        #expect(
            refused(
                #"{"title":{"$in":["xxxxxxxxxx","yyyyyyyyyy"]},"aaaaaaaaaaaaaaaaaaaaaaaaa":"w","bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb":"v"}"#
            ))
    }
}
