import ArgumentParser
import Foundation
import GalleryApp

/// `galleryd check-config`: prints the effective configuration with secrets masked,
/// or one line naming the bad key and exit code 2.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Print the effective configuration (secrets masked) and check it.")

    @OptionGroup var options: ConfigOptions

    @Flag(
        help:
            "Also check what `serve` needs (database URL, master key length; with storage = s3, that the endpoint answers, the credentials are accepted and the bucket exists; that no view hides a custom class)."
    )
    var serving = false

    @Flag(help: "Print the built-in defaults instead, ignoring the file, environment and flags.")
    var defaults = false

    func run() throws {
        let configuration = defaults ? GalleryConfiguration() : options.load()
        if serving {
            do {
                try configuration.validateForServing()
                try configuration.checkObjectStore()
                try GalleryApplication.checkViews(configuration: configuration)
            } catch {
                fail("config: \(error)")
            }
        }
        print(configuration.rendered(), terminator: "")
    }
}
