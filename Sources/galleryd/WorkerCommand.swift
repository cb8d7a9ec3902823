import ArgumentParser
import GalleryApp

/// `galleryd worker` (lands with its layer).
struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "worker", abstract: "Not yet available.")
    func run() throws { fail("worker is not available yet", code: 1) }
}
