import Foundation
import Testing

@testable import GalleryApp

/// The manifest's JSON as written straight from result bytes: every character a title can hold
/// survives the round trip, integers and timestamps come out as the decoding path wrote them.
@Suite struct ManifestEncodingTests {
    typealias F = ManifestFixtures

    @Test func find_WritesEveryTextAndTimestampExactly() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let titles = [
            #"quote " and backslash \ and slash /"#, "line\nbreak\ttab\r", "control \u{01}\u{1F} bytes",
            "Été à la plage 🌊", "日本語のタイトル", "",
        ]
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        try F.insert(
            server,
            titles.enumerated().map { index, title in
                F.Row(
                    id: "enc\(String(format: "%07d", index))", createdAt: t0.addingTimeInterval(Double(index)),
                    title: title, tags: [title, "plain"], byteSize: 5 + index * 1_000_000_007)
            })
        // taken_at with microseconds: rounded to the nearest millisecond, halves away from zero.
        try server.application.pool.query(
            "update photos set taken_at = '2023-05-06 07:08:09.123499+00' where object_id = 'enc0000000'")
        try server.application.pool.query(
            "update photos set taken_at = '2023-05-06 07:08:09.1235+00' where object_id = 'enc0000001'")
        try server.application.pool.query(
            "update photos set taken_at = '1969-12-31 23:59:59.9995+00' where object_id = 'enc0000002'")
        let r = try F.find(server, ["order": "createdAt", "limit": "10"])
        #expect(r.status == 200)
        let results = F.results(r)
        #expect(results.map { $0["title"] as? String } == titles.map { $0 })
        #expect(results.map { ($0["tags"] as? [String])?.first } == titles.map { $0 })
        #expect(results.map { $0["byteSize"] as? Int } == titles.indices.map { 5 + $0 * 1_000_000_007 })
        #expect(results[0]["createdAt"] as? String == "2023-11-14T22:13:20.000Z")
        func takenAt(_ index: Int) -> String? { (results[index]["takenAt"] as? [String: Any])?["iso"] as? String }
        #expect(takenAt(0) == "2023-05-06T07:08:09.123Z")
        #expect(takenAt(1) == "2023-05-06T07:08:09.124Z")
        #expect(takenAt(2) == "1969-12-31T23:59:59.999Z")  // -0.5 ms: away from zero
        let thumbnail = results[0]["thumbnail"] as? [String: Any]
        #expect(thumbnail?["name"] as? String == "enc0000000.jpg")
        #expect((thumbnail?["url"] as? String)?.hasSuffix("/bucket/thumbnails/enc0000000.jpg") == true)
        // One object by id goes through the same writer.
        let one = try server.request("GET", "/parse/classes/Photo/enc0000002")
        #expect(one.json["title"] as? String == titles[2])
    }
}
