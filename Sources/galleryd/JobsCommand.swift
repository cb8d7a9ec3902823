import ArgumentParser
import Foundation
import GalleryApp

/// `galleryd jobs`: the processing queue from the command line.
struct JobsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs", abstract: "Inspect and re-queue processing jobs.", subcommands: [JobsRetryCommand.self])
}

/// `galleryd jobs retry (--failed | --photo ID…)`: puts failed photos back in the queue with fresh
/// attempts (after an outage that outlasted their retries, or a fixed bug). Running workers are woken.
struct JobsRetryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "retry", abstract: "Re-queue failed photos.")

    @OptionGroup var options: ConfigOptions
    @Flag(help: "Re-queue every failed photo.") var failed = false
    @Option(name: .customLong("photo"), help: "Re-queue this failed photo (objectId); repeatable.") var photos:
        [String] = []

    func validate() throws {
        guard failed != !photos.isEmpty else { throw ValidationError("give either --failed or one or more --photo ID") }
    }

    func run() throws {
        var configuration = options.load()
        configuration.workers = 0
        guard !configuration.databaseURL.isEmpty else { fail("config: database_url: not set (DATABASE_URL)") }
        let logger = bootstrapLogging(level: "warning")
        do {
            let application = try GalleryApplication(configuration: configuration, logger: logger)
            defer { application.pool.shutdown() }
            let requeued = try application.jobs.requeueFailed(photoIds: failed ? nil : photos)
            print(
                "jobs: re-queued \(requeued.count) photo(s)"
                    + (requeued.isEmpty ? "" : ": " + requeued.joined(separator: " ")))
        } catch {
            fail("jobs retry: \(error)", code: 1)
        }
    }
}
