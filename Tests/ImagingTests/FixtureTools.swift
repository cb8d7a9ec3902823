import Foundation

/// Runs the encoders that make the HEIC, AVIF and WebP fixtures at test time: `heif-enc`
/// (libheif-examples), `cwebp`/`img2webp` (webp) and `cjpeg` (libjpeg-turbo-progs), which
/// `scripts/deps.sh` installs.
enum FixtureTools {
    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes `inputs` to a temporary directory, runs `tool` with `arguments` (the inputs' paths
    /// substituted for `{0}`, `{1}`…, the output's for `{out}`), and returns the output file.
    static func run(_ tool: String, _ arguments: [String], inputs: [(name: String, bytes: [UInt8])], output: String)
        throws -> [UInt8]
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "imaging-tools-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for input in inputs {
            let url = directory.appendingPathComponent(input.name)
            try Data(input.bytes).write(to: url)
            paths.append(url.path)
        }
        let out = directory.appendingPathComponent(output).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [tool]
            + arguments.map { argument in
                var text = argument.replacingOccurrences(of: "{out}", with: out)
                for (index, path) in paths.enumerated() {
                    text = text.replacingOccurrences(of: "{\(index)}", with: path)
                }
                return text
            }
        let log = Pipe()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let message = log.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: out) else {
            throw Failed(description: "\(tool) \(arguments) failed: \(String(decoding: message, as: UTF8.self))")
        }
        return [UInt8](data)
    }

    /// `heif-enc` on a PNG (or JPEG), with extra options.
    static func heic(_ input: [UInt8], inputName: String = "in.png", options: [String] = [], avif: Bool = false) throws
        -> [UInt8]
    {
        try run(
            "heif-enc", options + ["-o", "{out}", "{0}"], inputs: [(inputName, input)],
            output: avif ? "out.avif" : "out.heic")
    }

    /// `cwebp` on a PNG.
    static func webp(_ png: [UInt8], options: [String] = []) throws -> [UInt8] {
        try run("cwebp", ["-quiet"] + options + ["{0}", "-o", "{out}"], inputs: [("in.png", png)], output: "out.webp")
    }
}
