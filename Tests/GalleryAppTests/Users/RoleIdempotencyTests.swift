import Foundation
import Synchronization
import Testing

@testable import GalleryApp

/// `X-Parse-Request-Id` on the role routes (issue #27): a create sent again, one after the other
/// or at the same time, makes one role and answers its id each time; another id makes another.
struct RoleIdempotencyTests {
    private func create(_ server: TestServer, _ path: String, _ name: String, requestId: String) throws
        -> TestServer.Response
    {
        try server.json(
            "POST", path, ["name": name, "ACL": ["*": ["read": true]]],
            headers: ["X-Parse-Request-Id": requestId, "X-Parse-Master-Key": TestServer.masterKey])
    }

    private func roleCount(_ server: TestServer) throws -> Int64 {
        try server.application.pool.query("select count(*) from roles").first!.decode(Int64.self, 0)
    }

    @Test func retriedCreate_MakesOneRole_OnBothPaths() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        for (path, name) in [("/parse/roles", "Editors"), ("/parse/classes/_Role", "Writers")] {
            let first = try create(server, path, name, requestId: "retry-\(name)")
            #expect(first.status == 201, "\(first.text)")
            let again = try create(server, path, name, requestId: "retry-\(name)")
            #expect(again.status == 201, "\(again.text)")
            #expect(first.json["objectId"] as? String == again.json["objectId"] as? String)
            // Without the same id the name is taken: Parse's duplicate error, not a second role.
            let other = try create(server, path, name, requestId: "other-\(name)")
            #expect(other.status == 400 && other.json["code"] as? Int != nil, "\(other.text)")
        }
        #expect(try roleCount(server) == 2)
    }

    @Test func concurrentRetries_MakeOneRole_AndAllAnswerIt() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let answers = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 6) { _ in
            let response = try? create(server, "/parse/roles", "Moderators", requestId: "same-time")
            answers.withLock { $0.append((response?.json["objectId"] as? String) ?? "failed \(response?.text ?? "")") }
        }
        let ids = answers.withLock { $0 }
        #expect(ids.count == 6 && Set(ids).count == 1 && !ids[0].hasPrefix("failed"), "\(ids)")
        #expect(try roleCount(server) == 1)
    }
}
