import Foundation

/// Finds a directory galleryd ships beside its binary (`migrations/`, `web/`) when the
/// configuration names none: the first that holds its marker file of `<name>/` beside the binary
/// (up to four levels up, as `.build/<config>/galleryd` sits in the checkout), beside the source
/// tree it was built from (tests, development builds), `/usr/local/share/galleryd/<name>` and
/// `./<name>`. The one search the application (migrations) and `WebRoutes` (the web root) share.
enum ResourceDirectory {
    /// The configured directory when set, else the first candidate holding `marker`, else `name`
    /// (relative: the error then names what was looked for).
    static func find(_ name: String, marker: String, configured: String) -> String {
        if !configured.isEmpty { return configured }
        return candidates(name).first { FileManager.default.fileExists(atPath: $0 + "/" + marker) } ?? name
    }

    /// Where `name` is looked for, in order.
    static func candidates(_ name: String) -> [String] {
        var candidates: [String] = []
        // .build/<config>/galleryd → the checkout's <name>/.
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent(name).path)
            directory = directory.deletingLastPathComponent()
        }
        // This file is Sources/GalleryApp/ResourceDirectory.swift of the source tree.
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent(name).path)
        candidates += ["/usr/local/share/galleryd/" + name, FileManager.default.currentDirectoryPath + "/" + name]
        return candidates
    }
}
