import ArgumentParser
import Foundation
import GalleryApp

/// `galleryd worker`: processing workers without the HTTP server, for other machines sharing
/// the database and the blob store. Stops after the current jobs on SIGTERM or SIGINT.
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "worker", abstract: "Run processing workers only.")

    @OptionGroup var options: ConfigOptions
    @Option(help: "Worker threads (default: the workers setting, or the number of cores).") var threads: Int?
    @Flag(help: "Process the jobs that are due, then exit.") var once = false

    func run() throws {
        // --once stops on Ctrl-C the default way; otherwise the signals end the loop cleanly.
        if !once { TerminationSignals.block() }
        var configuration = options.load()
        guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
        let count = threads ?? max(1, configuration.workers)
        configuration.workers = 0
        let logger = bootstrapLogging(level: configuration.logLevel)
        let application: GalleryApplication
        do {
            application = try GalleryApplication(configuration: configuration, logger: logger)
        } catch {
            fail("worker: \(error)", code: 1)
        }
        let pool = application.makeWorkerPool(threads: count)
        if once {
            let processed = pool.drain()
            print("worker: processed \(processed) job(s)")
            return
        }
        let done = DispatchSemaphore(value: 0)
        TerminationSignals.handle { _ in done.signal() }
        pool.start()
        done.wait()
        logger.notice("worker stopping after current jobs")
        pool.stop()
    }
}
