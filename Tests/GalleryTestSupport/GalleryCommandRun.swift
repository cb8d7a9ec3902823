import Foundation

/// One run of a `galleryd` command as an operator types it (the built binary against a database):
/// its exit status, standard output and standard error.
public struct GalleryCommandRun: Sendable {
    public let status: Int32
    public let output: String
    public let error: String

    /// Runs `galleryd <arguments>` with `DATABASE_URL` set and `stdin` (if any) as its input.
    public static func galleryd(_ arguments: [String], databaseURL: String, stdin: String? = nil) throws
        -> GalleryCommandRun
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = arguments
        process.environment = ["DATABASE_URL": databaseURL, "GALLERYD_LOG_LEVEL": "warning"]
        let output = Pipe()
        let error = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return GalleryCommandRun(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            error: String(decoding: err, as: UTF8.self))
    }
}
