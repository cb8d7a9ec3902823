import Foundation
import Postgres
import Testing

@testable import GalleryApp

/// `galleryd import` under the faults of bench/faults-import.sh (decision 027, session 22): a
/// database that cannot be reached for a moment (a restart) and a disk nearly full, with HEIC and
/// PNG files (made by `UploadFormatTests.allFormats`).
@Suite(.serialized) struct ImportFaultTests {
    /// A temporary folder holding `files` (name → bytes).
    final class Folder {
        let path = NSTemporaryDirectory() + "galleryd-import-faults-" + UUID().uuidString

        init(_ files: [String: [UInt8]]) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, bytes) in files { try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name)) }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Makes the server's database refuse connections and ends the ones it has (as a restart does),
    /// waiting until none is left.
    static func closeDatabase(_ server: TestServer, admin: PostgresConnection) throws {
        try admin.execute("alter database \(server.databaseName) allow_connections false")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let left = try admin.query(
                "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", [server.databaseName])
            if left.isEmpty { return }
            usleep(20_000)
        }
        throw TestSetupError(description: "the test database's connections did not end")
    }

    static func openDatabase(_ server: TestServer, admin: PostgresConnection) throws {
        try admin.execute("alter database \(server.databaseName) allow_connections true")
    }

    @Test func importFile_TriesAgainWhileTheDatabaseIsUnreachable_AndImportsTheFileOnce() throws {
        let formats = try UploadFormatTests.allFormats()
        let folder = try Folder(["a.heic": formats["heic"]!, "b.png": formats["png"]!])
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let admin = try PostgresConnection(url: server.adminURL)
        defer { try? Self.openDatabase(server, admin: admin) }
        let application = server.application

        // No time to wait: the file fails with the connection's error, and leaves nothing behind.
        try Self.closeDatabase(server, admin: admin)
        let impatient = ImportService(
            uploads: application.uploads, spoolDirectory: application.store.spoolDirectory, databaseRetrySeconds: 0)
        guard case .failed(let reason) = impatient.importFile(folder.path + "/a.heic") else {
            Issue.record("imported with the database closed")
            return
        }
        #expect(reason.contains("PostgreSQL"), "\(reason)")
        #expect(impatient.outage.retries == 0)
        #expect(server.temporaryFiles().isEmpty)

        // A short window: the first file is tried again until the outage is that old, then fails;
        // the next file fails at once (the window is the outage's, not each file's).
        let brief = ImportService(
            uploads: application.uploads, spoolDirectory: application.store.spoolDirectory,
            databaseRetrySeconds: 0.3)
        guard case .failed = brief.importFile(folder.path + "/a.heic") else {
            Issue.record("imported with the database closed")
            return
        }
        let retries = brief.outage.retries
        #expect(retries > 0)
        guard case .failed = brief.importFile(folder.path + "/b.png") else {
            Issue.record("imported with the database closed")
            return
        }
        #expect(brief.outage.retries == retries)
        #expect(server.temporaryFiles().isEmpty)

        // The database comes back half a second later (another connection): the import waits it out.
        let service = ImportService(uploads: application.uploads, spoolDirectory: application.store.spoolDirectory)
        let reopener = Thread {
            usleep(500_000)
            if let connection = try? PostgresConnection(url: server.adminURL) {
                try? Self.openDatabase(server, admin: connection)
            }
        }
        reopener.start()
        let first = service.importFile(folder.path + "/a.heic")
        guard case .imported(let heic) = first else {
            Issue.record("the HEIC was not imported: \(first)")
            return
        }
        guard case .imported(let png) = service.importFile(folder.path + "/b.png") else {
            Issue.record("the PNG was not imported")
            return
        }
        guard case .duplicate(let again) = service.importFile(folder.path + "/a.heic") else {
            Issue.record("the HEIC again was not a duplicate")
            return
        }
        #expect(again == heic && heic != png)
        #expect(try server.scalar("select count(*)::bigint from files") == 2)
        #expect(try server.scalar("select count(*)::bigint from photos") == 2)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 2)
        #expect(server.blobFiles(under: "originals").count == 2)
        #expect(server.temporaryFiles().isEmpty)
    }

    @Test func importFile_RefusesAFileThatWouldLeaveLessThanMinFreeBytes_WritingNothing() throws {
        let formats = try UploadFormatTests.allFormats()
        let folder = try Folder(["a.heic": formats["heic"]!, "b.png": formats["png"]!])
        // A reserve no disk here has: as an upload would get 507, the import refuses each file.
        let server = try TestServer(workers: 0) { $0.minFreeBytes = 1 << 50 }
        defer { server.stop() }
        let application = server.application
        let service = ImportService(
            uploads: application.uploads, spoolDirectory: application.store.spoolDirectory,
            admission: application.uploadAdmission)
        for name in ["a.heic", "b.png"] {
            guard case .failed(let reason) = service.importFile(folder.path + "/" + name) else {
                Issue.record("\(name) was imported below the reserve")
                continue
            }
            #expect(reason.contains("Insufficient storage") && reason.contains("reserve"), "\(reason)")
        }
        #expect(try server.scalar("select count(*)::bigint from files") == 0)
        #expect(try server.scalar("select count(*)::bigint from photos") == 0)
        #expect(server.blobFiles(under: "originals").isEmpty)
        #expect(server.temporaryFiles().isEmpty)

        // The command passes the server's rule on: it names each file and fails.
        let run = try ImportTests.run(
            ["import", folder.path], server: server, environment: ["GALLERYD_MIN_FREE_BYTES": "\(1 << 50)"])
        #expect(run.status == 1, "\(run.out)\n\(run.err)")
        #expect(run.out.contains("0 imported, 0 duplicate(s) skipped, 2 failed"), "\(run.out)")
        #expect(run.out.contains("failed: \(folder.path)/b.png: Insufficient storage"), "\(run.out)")
        #expect(try server.scalar("select count(*)::bigint from files") == 0)
        #expect(server.blobFiles(under: "originals").isEmpty)
    }

    /// `import --process` run again after a kill (bench/faults-import.sh with PROCESS=1): the killed run's
    /// worker held a photo's job mid-decode (running, its lease not yet out, the photo `processing`) and
    /// another photo's job was backing off after a failed attempt. Neither is due when the run starts, so
    /// one drain left both; the run now waits until each is due, takes it and ends with both ready.
    @Test func importProcess_FinishesAJobAKilledWorkerHeld_AndOneBackingOff() throws {
        let formats = try UploadFormatTests.allFormats()
        let folder = try Folder(["a.heic": formats["heic"]!, "b.png": formats["png"]!])
        let server = try TestServer(workers: 0) { $0.jobLeaseSeconds = 3 }
        defer { server.stop() }
        let application = server.application
        let service = ImportService(uploads: application.uploads, spoolDirectory: application.store.spoolDirectory)
        guard case .imported(let heic) = service.importFile(folder.path + "/a.heic"),
            case .imported(let png) = service.importFile(folder.path + "/b.png")
        else {
            Issue.record("the files were not imported")
            return
        }
        // The killed import: its worker claimed the HEIC's job (attempt 1) and began the decode.
        let held = try #require(try application.jobs.claim(worker: "dead-host:4242/drain"))
        #expect(held.photoId == heic)
        try application.uploads.photos.markProcessing(heic)
        try application.pool.execute(
            "update jobs set run_at = now() + interval '3 seconds' where photo_id = '\(png)'")
        let workers = application.makeWorkerPool(threads: 1)
        #expect(workers.drain() == 0, "neither job is due yet")

        var waitedFor = 0
        let (ran, failed) = try service.process([heic, png], with: workers, pollInterval: 0.1) { waitedFor = $0 }
        #expect(waitedFor >= 1, "it waited for the held job")
        #expect(ran == 2 && failed == 0)
        #expect(try server.scalar("select count(*)::bigint from photos where status = 'ready'") == 2)
        #expect(try server.scalar("select count(*)::bigint from jobs where state = 'done'") == 2)
        // The kill used the HEIC's first attempt; the PNG's back-off none more.
        #expect(try server.scalar("select attempts::bigint from jobs where photo_id = $1", [heic]) == 2)
        #expect(try server.scalar("select attempts::bigint from jobs where photo_id = $1", [png]) == 1)
        #expect(server.temporaryFiles().isEmpty)
    }

    @Test func galleryd_Import_WhoseOwnerAssignmentFails_StillPrintsItsSummary() throws {
        let formats = try UploadFormatTests.allFormats()
        let folder = try Folder(["a.heic": formats["heic"]!, "b.png": formats["png"]!])
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        // With an admin, the step after the files gives them the ownerless photos; a trigger makes
        // that update fail, as a database gone at the end of an import does (the same step at the
        // start, after migrating, updates no photo and passes).
        _ = try server.makeUser("boss", admin: true)
        try server.application.pool.execute(
            """
            create function refuse_owner() returns trigger language plpgsql as $$
            begin raise exception 'owner assignment refused'; end $$;
            create trigger refuse_owner before update of owner_id on photos for each row execute function refuse_owner();
            """)
        let run = try ImportTests.run(["import", folder.path], server: server)
        #expect(run.status == 1, "\(run.out)\n\(run.err)")
        #expect(run.out.contains("2 imported, 0 duplicate(s) skipped, 0 failed"), "\(run.out)")
        #expect(run.err.contains("giving the photos to the first admin"), "\(run.err)")
        #expect(try server.scalar("select count(*)::bigint from photos where owner_id is null") == 2)
    }
}
