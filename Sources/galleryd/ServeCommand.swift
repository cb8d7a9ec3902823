import ArgumentParser
import GalleryApp

/// `galleryd serve` (lands with its layer).
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Not yet available.")
    func run() throws { fail("serve is not available yet", code: 1) }
}
