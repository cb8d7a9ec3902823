import ArgumentParser
import Foundation
import GalleryApp
import Synchronization

/// `galleryd import DIR…`: uploads every photo under the folders (JPEG, PNG, WebP, HEIC/HEIF, AVIF,
/// found by extension or by their first bytes; stored as what their bytes are) through the same service code as
/// the HTTP API, several at a time, with a progress bar on a terminal and a summary at the end.
/// Exits 1 when any file failed, naming each.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import JPEG, PNG, WebP, HEIC and AVIF photos from folders.")

    @OptionGroup var options: ConfigOptions
    @Option(help: "Files imported at once.") var concurrency = 4
    @Flag(help: "Also wait until every imported photo is processed (needs running workers, or use --process).")
    var wait = false
    @Flag(help: "Process the imported photos in this process before exiting.") var process = false
    @Argument(help: "Folders or files to import.") var paths: [String]

    func run() throws {
        var configuration = options.load()
        guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
        configuration.workers = 0
        let logger = bootstrapLogging(level: "warning")
        let application: GalleryApplication
        do {
            application = try GalleryApplication(configuration: configuration, logger: logger)
            try application.migrate()
        } catch {
            fail("import: \(error)", code: 1)
        }
        let (files, missing) = ImportService.findImages(in: paths)
        for path in missing {
            FileHandle.standardError.write(Data("galleryd: import: \(path): no such file or directory\n".utf8))
        }
        let service = ImportService(
            uploads: application.uploads, spoolDirectory: application.store.spoolDirectory,
            admission: application.uploadAdmission)
        let progress = ProgressReporter(total: files.count)
        let started = Date()
        let results = OutcomeBox(count: files.count)
        let gate = DispatchSemaphore(value: max(1, concurrency))
        let group = DispatchGroup()
        for (index, file) in files.enumerated() {
            gate.wait()
            group.enter()
            DispatchQueue.global().async {
                let outcome = service.importFile(file)
                results.set(index, outcome)
                progress.advance(file: file, outcome: outcome)
                gate.signal()
                group.leave()
            }
        }
        group.wait()
        progress.finish()
        // Imported photos have no owner: once an admin exists they are the first admin's at once
        // (as `migrate` and `serve` would give them), not only after the next start. A failure (the
        // database gone at the end of the run) is reported after the summary, which still matters.
        var ownerError: Error?
        do {
            try OwnershipRepository(pool: application.pool).assignOwnerlessRowsToFirstAdmin()
        } catch {
            ownerError = error
        }

        var imported = 0
        var duplicates = 0
        var failures: [(String, String)] = []
        for (index, outcome) in results.all.enumerated() {
            switch outcome {
            case .imported?: imported += 1
            case .duplicate?: duplicates += 1
            case .failed(let reason)?: failures.append((files[index], reason))
            case nil: failures.append((files[index], "not processed"))
            }
        }
        var ids = Set<String>()
        for outcome in results.all {
            if case .imported(let id)? = outcome { ids.insert(id) }
            if case .duplicate(let id)? = outcome { ids.insert(id) }
        }
        if process {
            // Until every photo of the import is processed: a job a killed run held comes back
            // when its lease runs out (a re-run after a kill used to exit with it `processing`).
            let pool = application.makeWorkerPool(threads: max(1, ProcessInfo.processInfo.activeProcessorCount))
            do {
                let (ran, failed) = try service.process(ids.sorted(), with: pool) { count in
                    print("waiting for \(count) photo(s) whose job another worker holds or is backing off")
                }
                print("processed \(ran) photo(s)")
                if failed > 0 { failures.append(("(processing)", "\(failed) photo(s) failed to process")) }
            } catch {
                failures.append(("(processing)", "\(error)"))
            }
        }
        if wait {
            do {
                let failed = try service.waitForProcessing(ids.sorted())
                print("processed \(ids.count - failed) photo(s), \(failed) failed")
                if failed > 0 { failures.append(("(processing)", "\(failed) photo(s) failed to process")) }
            } catch {
                fail("import: waiting for processing: \(error)", code: 1)
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "import: \(files.count) file(s) in \(String(format: "%.1f", seconds)) s: \(imported) imported, "
                + "\(duplicates) duplicate(s) skipped, \(failures.count) failed")
        for (file, reason) in failures { print("  failed: \(file): \(reason)") }
        if let ownerError {
            fail(
                "import: giving the photos to the first admin: \(ownerError) (galleryd migrate does it again)", code: 1)
        }
        if !failures.isEmpty || !missing.isEmpty { throw ExitCode(1) }
    }
}

/// The per-file outcomes, written from the import threads.
final class OutcomeBox: Sendable {
    private let outcomes: Mutex<[ImportService.Outcome?]>

    init(count: Int) { outcomes = Mutex(Array(repeating: nil, count: count)) }

    func set(_ index: Int, _ outcome: ImportService.Outcome) {
        outcomes.withLock { $0[index] = outcome }
    }

    var all: [ImportService.Outcome?] {
        outcomes.withLock { $0 }
    }
}

/// A progress bar on a terminal, plain lines otherwise.
final class ProgressReporter: Sendable {
    private let total: Int
    /// Files done; the line is written under the mutex too, so lines never interleave.
    private let done = Mutex(0)
    private let isTerminal = isatty(STDERR_FILENO) == 1

    init(total: Int) { self.total = total }

    func advance(file: String, outcome: ImportService.Outcome) {
        done.withLock { done in
            done += 1
            report(done: done, file: file, outcome: outcome)
        }
    }

    private func report(done: Int, file: String, outcome: ImportService.Outcome) {
        if isTerminal {
            let width = 30
            let filled = total == 0 ? width : width * done / total
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let name = (file as NSString).lastPathComponent
            FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) \(name.prefix(40))\u{1B}[K".utf8))
        } else {
            let word: String
            switch outcome {
            case .imported: word = "imported"
            case .duplicate: word = "duplicate"
            case .failed(let reason): word = "failed: \(reason)"
            }
            FileHandle.standardError.write(Data("[\(done)/\(total)] \(file): \(word)\n".utf8))
        }
    }

    func finish() {
        if isTerminal && total > 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
