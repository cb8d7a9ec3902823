import Foundation
import Testing

@testable import GalleryApp

/// `galleryd import`: the folder walk and `ImportService` against a real database and store, and
/// one run of the built `galleryd` binary for its counts, summary and exit code.
@Suite(.serialized) struct ImportTests {
    /// A temporary folder with three distinct JPEGs (one in a subfolder, one with an upper-case
    /// extension), a duplicate of the first, a `.jpg` that is text, a text file and a hidden folder.
    final class Folder {
        let path = NSTemporaryDirectory() + "galleryd-import-" + UUID().uuidString
        let good: [[UInt8]]

        init() throws {
            good = try (0..<3).map { try TestJPEG.make(width: 40 + $0 * 8, height: 32, seed: 200 + UInt64($0)) }
            let fm = FileManager.default
            try fm.createDirectory(atPath: path + "/sub", withIntermediateDirectories: true)
            try fm.createDirectory(atPath: path + "/.hidden", withIntermediateDirectories: true)
            try write("a.jpg", good[0])
            try write("b.jpeg", good[1])
            try write("sub/C.JPG", good[2])
            try write("sub/copy-of-a.jpg", good[0])
            try write("broken.jpg", Array("not a jpeg\n".utf8))
            try write("notes.txt", Array("ignored\n".utf8))
            try write(".hidden/d.jpg", try TestJPEG.make(width: 16, height: 16, seed: 299))
        }

        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/" + name))
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func findImages_WalksFolders_SkippingHiddenAndOtherFiles() throws {
        let folder = try Folder()
        let found = ImportService.findImages(in: [folder.path, folder.path + "/nope"])
        let relative = found.files.map { String($0.dropFirst(folder.path.count + 1)) }
        #expect(relative == ["a.jpg", "b.jpeg", "broken.jpg", "sub/C.JPG", "sub/copy-of-a.jpg"])
        #expect(found.missing == [folder.path + "/nope"])
    }

    @Test func importService_ImportsNewFiles_CountsDuplicates_AndReportsFailures() throws {
        let folder = try Folder()
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let service = ImportService(
            uploads: server.application.uploads, spoolDirectory: server.application.store.spoolDirectory)
        var imported: [String: String] = [:]
        var duplicates: [String: String] = [:]
        var failed: [String: String] = [:]
        for file in ImportService.findImages(in: [folder.path]).files {
            let name = String(file.dropFirst(folder.path.count + 1))
            switch service.importFile(file) {
            case .imported(let id): imported[name] = id
            case .duplicate(let id): duplicates[name] = id
            case .failed(let reason): failed[name] = reason
            }
        }
        #expect(Set(imported.keys) == ["a.jpg", "b.jpeg", "sub/C.JPG"])
        #expect(duplicates == ["sub/copy-of-a.jpg": imported["a.jpg"]!])
        #expect(Set(failed.keys) == ["broken.jpg"])
        #expect(failed["broken.jpg"]?.contains("JPEG") == true)
        #expect(try server.scalar("select count(*)::bigint from photos where status = 'pending'") == 3)
        #expect(try server.scalar("select count(*)::bigint from jobs") == 3)
        #expect(server.blobFiles(under: "originals").count == 3)
        #expect(server.temporaryFiles().isEmpty)
        // The photo keeps the file's name; the source files are untouched.
        let photo = try server.request("GET", "/parse/classes/Photo/\(imported["sub/C.JPG"]!)").json
        #expect(photo["filename"] as? String == "C.JPG")
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.path + "/a.jpg")) == Data(folder.good[0]))
    }

    /// The `galleryd` executable built beside this test bundle.
    static func galleryd() throws -> String {
        var candidates: [URL] = []
        if let executable = Bundle.main.executableURL { candidates.append(executable.deletingLastPathComponent()) }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(repository.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let path = directory.appendingPathComponent("galleryd").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw TestSetupError(
            description:
                "galleryd binary not found beside the tests (looked in \(candidates.map(\.path))); build it with `swift build`"
        )
    }

    /// Runs galleryd with `arguments` against the server's database and store, `environment` added;
    /// returns exit code, stdout, stderr.
    static func run(
        _ arguments: [String], server: TestServer, environment extra: [String: String] = [:]
    ) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryd())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GALLERYD_") }
        environment["DATABASE_URL"] = server.application.configuration.databaseURL
        environment["GALLERYD_STORAGE_DIR"] = server.storage
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a chatty child cannot block on a full pipe.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        return (
            process.terminationStatus, String(decoding: outData, as: UTF8.self),
            String(decoding: errData, as: UTF8.self)
        )
    }

    @Test func galleryd_Import_PrintsASummary_AndExitsNonZeroNamingTheFailures() throws {
        let folder = try Folder()
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let first = try Self.run(["import", "--concurrency", "3", "--process", folder.path], server: server)
        #expect(first.status == 1, "\(first.out)\n\(first.err)")
        #expect(first.out.contains("5 file(s)"), "\(first.out)")
        #expect(first.out.contains("3 imported"), "\(first.out)")
        #expect(first.out.contains("1 duplicate(s) skipped"), "\(first.out)")
        #expect(first.out.contains("1 failed"), "\(first.out)")
        #expect(first.out.contains("failed: \(folder.path)/broken.jpg"), "\(first.out)")
        // Not a terminal: one plain progress line per file instead of a bar.
        #expect(first.err.components(separatedBy: "\n").filter { $0.hasPrefix("[") }.count == 5, "\(first.err)")
        #expect(first.out.contains("processed 3 photo(s)"), "\(first.out)")
        #expect(try server.scalar("select count(*)::bigint from photos where status = 'ready'") == 3)
        #expect(try server.request("GET", "/parse/classes/Photo?count=1&limit=0").json["count"] as? Int == 3)

        // Again, without the broken file: everything is a duplicate and the run succeeds.
        try FileManager.default.removeItem(atPath: folder.path + "/broken.jpg")
        let second = try Self.run(["import", "--wait", folder.path], server: server)
        #expect(second.status == 0, "\(second.out)\n\(second.err)")
        #expect(second.out.contains("0 imported, 4 duplicate(s) skipped, 0 failed"), "\(second.out)")
        #expect(second.out.contains("processed 3 photo(s), 0 failed"), "\(second.out)")
        #expect(try server.scalar("select count(*)::bigint from photos") == 3)

        // A path that does not exist is named and fails the run.
        let missing = try Self.run(["import", folder.path + "/nope"], server: server)
        #expect(missing.status == 1)
        #expect(missing.err.contains("nope: no such file or directory"), "\(missing.err)")
    }
}
