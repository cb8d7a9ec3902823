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
        @Sendable func originalIsIntact() -> Bool {
            (try? FileManager.default.attributesOfItem(atPath: originalPath))?[.size] as? Int == jpeg.count
        }
        let failures = Locked([String]())
        let rounds = 300
        for round in 0..<rounds {
            #expect(try server.request("DELETE", "/parse/classes/Photo/\(photo)").status == 200)
            let trashed = photo
            let created = Locked<String?>(nil)
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {
                usleep(UInt32.random(in: 0...3_000))
                do {
                    let purge = try server.request("DELETE", "/parse/purge/Photo/\(trashed)")
                    // 119: the re-upload's create took the photo out of the trash first.
                    if purge.status != 200 && !(purge.status == 400 && purge.json["code"] as? Int == 119) {
                        failures.withValue { $0.append("round \(round): purge \(purge.status) \(purge.text)") }
                    }
                } catch {
                    failures.withValue { $0.append("round \(round): purge \(error)") }
                }
            }
            DispatchQueue.global().async(group: group) {
                usleep(UInt32.random(in: 0...3_000))
                do {
                    let file = try server.request(
                        "POST", "/parse/files/race.jpg", body: Data(jpeg), headers: ["Content-Type": "image/jpeg"])
                    guard file.status == 201, let name = file.json["name"] as? String else {
                        failures.withValue { $0.append("round \(round): upload \(file.status) \(file.text)") }
                        return
                    }
                    if !originalIsIntact() {
                        failures.withValue { $0.append("round \(round): 201 for a missing original") }
                    }
                    let create = try server.json(
                        "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]])
                    guard create.status == 201 || create.status == 200, let id = create.json["objectId"] as? String
                    else {
                        failures.withValue { $0.append("round \(round): create \(create.status) \(create.text)") }
                        return
                    }
                    created.withValue { $0 = id }
                } catch {
                    failures.withValue { $0.append("round \(round): upload \(error)") }
                }
            }
            group.wait()
            guard let id = created.current else { break }
            let fetched = try server.request("GET", "/parse/classes/Photo/\(id)")
            if fetched.status != 200 || fetched.json["deletedAt"] != nil {
                failures.withValue {
                    $0.append("round \(round): photo \(id) after the race: \(fetched.status) \(fetched.text)")
                }
            }
            if !originalIsIntact() {
                failures.withValue { $0.append("round \(round): photo \(id)'s original is gone") }
            }
            if !failures.current.isEmpty { break }
            photo = id
        }
        #expect(failures.current.isEmpty, "\(failures.current.prefix(5))")
        // Exactly one photo and one files row for the bytes, no upload left waiting.
        let pool = server.application.pool
        #expect(try pool.query("select count(*) from photos")[0].decode(Int.self, 0) == 1)
        #expect(try pool.query("select count(*) from files")[0].decode(Int.self, 0) == 1)
        #expect(try pool.query("select count(*) from file_uploads")[0].decode(Int.self, 0) == 0)
    }
}
