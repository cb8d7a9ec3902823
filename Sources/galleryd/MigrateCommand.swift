import ArgumentParser
import GalleryApp

/// `galleryd migrate` (lands with its layer).
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Not yet available.")
    func run() throws { fail("migrate is not available yet", code: 1) }
}
