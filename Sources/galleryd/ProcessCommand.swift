import ArgumentParser

/// `galleryd process` (lands with the Imaging layer).
struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "process", abstract: "Not yet available.")
    func run() throws { fail("process is not available yet", code: 1) }
}
