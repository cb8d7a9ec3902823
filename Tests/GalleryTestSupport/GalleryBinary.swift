import Foundation

/// The `galleryd` executable built next to the test bundle (`.build/<config>/`), for the tests that
/// run the commands as an operator does.
public func galleryBinary() throws -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = bundle.deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("galleryd").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    throw TestSetupError(description: "galleryd binary not found near \(bundle.path); build it with swift build")
}
