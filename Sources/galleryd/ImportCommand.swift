import ArgumentParser
import GalleryApp

/// `galleryd import` (lands with its layer).
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import", abstract: "Not yet available.")
    func run() throws { fail("import is not available yet", code: 1) }
}
