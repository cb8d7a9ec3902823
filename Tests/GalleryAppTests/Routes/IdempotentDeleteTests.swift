import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// DELETE is idempotent (RFC 9110 §9.2.2; issue #13, item 2): however often a client, an SDK's
/// method override, a batch or a proxy re-sends it, a photo or gallery only moves to Recently
/// Deleted. Deleting for good is `DELETE /purge/<Class>/<id>`.
@Suite struct IdempotentDeleteTests {
    @Test func retriedDelete_InEveryForm_NeverPurges() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 61))
        let gallery = try #require(
            try server.json("POST", "/parse/classes/Gallery", ["name": "Kept"]).json["objectId"] as? String)
        let original = try server.application.pool.query("select key from files")[0].decode(String.self, "key")
        for (className, id) in [("Photo", photo), ("Gallery", gallery)] {
            for _ in 0..<5 {
                let direct = try server.request("DELETE", "/parse/classes/\(className)/\(id)")
                #expect(direct.status == 200 && direct.text == "{}", "\(direct.text)")
                let overridden = try server.json("POST", "/parse/classes/\(className)/\(id)", ["_method": "DELETE"])
                #expect(overridden.status == 200 && overridden.text == "{}", "\(overridden.text)")
                let batch = try server.json(
                    "POST", "/parse/batch",
                    [
                        "requests": [["method": "DELETE", "path": "/parse/classes/\(className)/\(id)"]]
                    ])
                #expect(batch.status == 200 && batch.text == "[{\"success\":{}}]", "\(batch.text)")
            }
            let fetched = try server.request("GET", "/parse/classes/\(className)/\(id)")
            #expect(fetched.status == 200)
            #expect((fetched.json["deletedAt"] as? [String: Any])?["__type"] as? String == "Date")
        }
        #expect(FileManager.default.fileExists(atPath: server.storage + "/" + original))

        // Purging needs the app's keys, and happens once: a repeat is 101.
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photo)", appID: nil).status == 403)
        #expect(try server.request("DELETE", "/parse/purge/Photo/\(photo)").status == 200)
        #expect(!FileManager.default.fileExists(atPath: server.storage + "/" + original))
        let again = try server.request("DELETE", "/parse/purge/Photo/\(photo)")
        #expect(again.status == 404 && again.json["code"] as? Int == 101)
        #expect(
            try server.request(
                "DELETE", "/parse/purge/Gallery/\(gallery)", headers: ["X-Parse-Master-Key": TestServer.masterKey]
            ).status == 200)
        #expect(try server.request("GET", "/parse/classes/Gallery/\(gallery)").status == 404)
        // Classes without Recently Deleted, and ids no object can have.
        let item = try server.request("DELETE", "/parse/purge/GalleryItem/abcdefghij")
        #expect(item.status == 400 && item.json["code"] as? Int == 119)
        #expect(try server.request("DELETE", "/parse/purge/Photo/no%20such").status == 404)
        #expect(try server.request("DELETE", "/parse/purge/Nope/abcdefghij").json["code"] as? Int == 103)
    }

    @Test func delete_WhoseConnectionDiesAfterItWasSent_Answers503_AndItsRetryOnlyTrashes() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let photo = try server.uploadPhoto(try TestJPEG.make(width: 64, height: 48, seed: 62))
        let pool = server.application.pool
        // Holds the trash UPDATE until its session is terminated (however long a busy machine takes
        // to see it running; the terminate ends the sleep).
        try pool.execute(
            """
            create function slow_trash() returns trigger language plpgsql as $$
            begin perform pg_sleep(120); return new; end $$;
            create trigger slow_trash before update of deleted_at on photos for each row
            when (old.deleted_at is null and new.deleted_at is not null) execute function slow_trash();
            """)
        let answer = Locked<TestServer.Response?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            answer.withValue { $0 = try? server.request("DELETE", "/parse/classes/Photo/\(photo)") }
            done.signal()
        }
        let killer = try PostgresConnection(
            url: TestServer.url(try TestServer.databaseURL(), database: server.databaseName))
        var terminated = false
        let deadline = Date().addingTimeInterval(60)
        while !terminated && Date() < deadline {
            terminated =
                try killer.query(
                    """
                    select pg_terminate_backend(pid) as ok from pg_stat_activity
                    where datname = current_database() and pid <> pg_backend_pid() and state = 'active'
                      and query like 'update photos set deleted_at%'
                    """
                ).count > 0
            if !terminated { usleep(5_000) }
        }
        #expect(terminated)
        done.wait()
        let lost = try #require(answer.current)
        #expect(lost.status == 503 && lost.json["code"] as? Int == 1, "\(lost.status) \(lost.text)")
        #expect(lost.header("Retry-After") == "1")
        try pool.execute("drop trigger slow_trash on photos")
        // The client retries, as told: the photo goes to Recently Deleted, never further.
        for _ in 0..<2 {
            let retried = try server.request("DELETE", "/parse/classes/Photo/\(photo)")
            #expect(retried.status == 200, "\(retried.text)")
        }
        let fetched = try server.request("GET", "/parse/classes/Photo/\(photo)")
        #expect(fetched.status == 200 && fetched.json["deletedAt"] != nil)
    }
}
