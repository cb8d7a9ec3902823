import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp

/// A trashed photo's purge racing an upload of the same bytes and a photo created from that
/// upload (issue #13, item 4): the upload's 201 must always name stored bytes, and the photo made
/// from it must keep them. Each side starts after a random 0–3 ms; what goes wrong is noted in
/// `failures`, prefixed with its round, for `expectNoFailuresAndOneStoredPhoto` to report.
struct PurgeRace: Sendable {
    let server: TestServer
    /// The bytes both the purged photo and the new upload hold.
    let jpeg: [UInt8]
    /// The stored original's path.
    let original: String
    /// What went wrong, a line each.
    let failures = Locked([String]())

    /// Whether the stored original is still there, whole.
    func originalIsIntact() -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: original))?[.size] as? Int == jpeg.count
    }

    /// One round: purges `trashed` (with `purgeHeaders`; `purgeIsAnswered` judges the answer)
    /// while uploading `jpeg` as `race.jpg` and creating a photo of it (with `uploadHeaders`;
    /// `createdStatuses` are the answers that made one). The new photo's objectId, or nil when
    /// the upload or the create failed; the original must still be whole once both are done.
    func round(
        _ round: Int, purging trashed: String, purgeHeaders: [String: String] = [:],
        purgeIsAnswered: @escaping @Sendable (TestServer.Response) -> Bool = { $0.status == 200 },
        uploadHeaders: [String: String] = [:], createdStatuses: Set<Int> = [201]
    ) -> String? {
        let created = Locked<String?>(nil)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            usleep(UInt32.random(in: 0...3_000))
            do {
                let purge = try server.request("DELETE", "/parse/purge/Photo/\(trashed)", headers: purgeHeaders)
                if !purgeIsAnswered(purge) {
                    failures.withValue { $0.append("round \(round): purge \(purge.status) \(purge.text)") }
                }
            } catch {
                failures.withValue { $0.append("round \(round): purge \(error)") }
            }
        }
        DispatchQueue.global().async(group: group) {
            usleep(UInt32.random(in: 0...3_000))
            do {
                var headers = uploadHeaders
                headers["Content-Type"] = "image/jpeg"
                let file = try server.request("POST", "/parse/files/race.jpg", body: Data(jpeg), headers: headers)
                guard file.status == 201, let name = file.json["name"] as? String else {
                    failures.withValue { $0.append("round \(round): upload \(file.status) \(file.text)") }
                    return
                }
                if !originalIsIntact() {
                    failures.withValue { $0.append("round \(round): 201 for a missing original") }
                }
                let create = try server.json(
                    "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]],
                    headers: uploadHeaders)
                guard createdStatuses.contains(create.status), let id = create.json["objectId"] as? String else {
                    failures.withValue { $0.append("round \(round): create \(create.status) \(create.text)") }
                    return
                }
                created.withValue { $0 = id }
            } catch {
                failures.withValue { $0.append("round \(round): upload \(error)") }
            }
        }
        group.wait()
        if let id = created.current, !originalIsIntact() {
            failures.withValue { $0.append("round \(round): photo \(id)'s original is gone") }
        }
        return created.current
    }

    /// Expects no round to have failed, and the bytes to be left as one photo and one `files` row
    /// with no upload waiting.
    func expectNoFailuresAndOneStoredPhoto(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(failures.current.isEmpty, "\(failures.current.prefix(5))", sourceLocation: sourceLocation)
        let pool = server.application.pool
        for (table, count) in [("photos", 1), ("files", 1), ("file_uploads", 0)] {
            let found = try pool.query("select count(*) from \(table)")[0].decode(Int.self, 0)
            #expect(found == count, "\(table)", sourceLocation: sourceLocation)
        }
    }
}
