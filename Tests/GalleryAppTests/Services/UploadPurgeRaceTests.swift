import Foundation
import Testing

@testable import GalleryApp

/// A re-upload of a trashed photo's bytes racing the purge of that photo (issue #13, item 4):
/// the upload's 201 must always name bytes that exist, and creating the photo from it must work.
@Suite struct UploadPurgeRaceTests {
    @Test func reupload_RacingPurge_AlwaysNamesStoredBytes_AndCreates() throws {
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let jpeg = try TestJPEG.make(width: 48, height: 32, seed: 77)
        var photo = try server.uploadPhoto(jpeg, name: "race.jpg")
        let originalPath =
            server.storage + "/"
            + (try server.application.pool.query("select key from files")[0].decode(String.self, "key"))
        let race = PurgeRace(server: server, jpeg: jpeg, original: originalPath)
        let rounds = 300
        for round in 0..<rounds {
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200)
            // 119: the re-upload's create took the photo out of the trash first.
            let created = race.round(
                round, purging: photo,
                purgeIsAnswered: { $0.status == 200 || ($0.status == 400 && $0.json["code"] as? Int == 119) },
                createdStatuses: [200, 201])
            guard let id = created else { break }
            let fetched = try server.request("GET", "/parse/classes/Photo/\(id)")
            if fetched.status != 200 || fetched.json["deletedAt"] != nil {
                race.failures.withValue {
                    $0.append("round \(round): photo \(id) after the race: \(fetched.status) \(fetched.text)")
                }
            }
            if !race.failures.current.isEmpty { break }
            photo = id
        }
        // Exactly one photo and one files row for the bytes, no upload left waiting.
        try race.expectNoFailuresAndOneStoredPhoto()
    }
}
