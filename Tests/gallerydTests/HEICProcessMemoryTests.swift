import Foundation
import GalleryTestSupport
import Testing

/// `galleryd process` on a HEIC whose preview keeps the original's size (the preview is held whole
/// to measure its detail, decision 067): its peak RSS (VmHWM, which the command's summary reports as
/// `peakRSSKB`) over a 64×64 HEIC's. libheif's whole RGB image is freed once the rows
/// are taken, before the encodes (decision 027, session 24); held to the end, as before, it is
/// 3 bytes a pixel more at the peak: at 2048×1536 a run grew by about 31.6 MB over the small one's
/// (10.5 bytes a pixel), against about 22 MB (7.2) without it.
@Suite struct HEICProcessMemoryTests {
    /// A W×H 4:2:0 frame as `heif-enc` reads it (YUV4MPEG2): ramps and a product term, so the
    /// encoder has something to code but finishes in seconds.
    static func y4m(width: Int, height: Int) -> [UInt8] {
        var bytes = Array("YUV4MPEG2 W\(width) H\(height) F25:1 Ip A1:1 C420jpeg\nFRAME\n".utf8)
        bytes.reserveCapacity(bytes.count + width * height * 3 / 2)
        for y in 0..<height {
            for x in 0..<width { bytes.append(UInt8(truncatingIfNeeded: x * 255 / width + (y / 8) * 3 + (x * y) >> 6)) }
        }
        for _ in 0..<height / 2 {
            for x in 0..<width / 2 { bytes.append(UInt8(truncatingIfNeeded: 64 + x * 256 / width)) }
        }
        for y in 0..<height / 2 {
            for _ in 0..<width / 2 { bytes.append(UInt8(truncatingIfNeeded: 192 - y * 256 / height)) }
        }
        return bytes
    }

    /// `galleryd process INPUT --out OUT`: its exit status and its summary's `peakRSSKB` (the process's own
    /// VmHWM; `wait4`'s `ru_maxrss` would carry the test runner's peak, from before the exec).
    static func process(_ input: String, out: String) throws -> (status: Int32, kB: Int?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try galleryBinary())
        process.arguments = ["process", input, "--out", out]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return (process.terminationStatus, summary?["peakRSSKB"] as? Int)
    }

    /// `heif-enc -q 50` on a generated W×H frame, written into `directory`.
    static func heic(width: Int, height: Int, in directory: URL) throws -> String {
        let input = directory.appendingPathComponent("in-\(width)x\(height).y4m")
        let output = directory.appendingPathComponent("in-\(width)x\(height).heic").path
        try Data(y4m(width: width, height: height)).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["heif-enc", "-q", "50", "-o", output, input.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSetupError(description: "heif-enc failed") }
        return output
    }

    @Test func process_OriginalSizeHEIC_FreesTheDecodedImageBeforeTheEncodes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "galleryd-heic-memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (width, height) = (2048, 1536)
        let small = try Self.heic(width: 64, height: 64, in: directory)
        let large = try Self.heic(width: width, height: height, in: directory)
        let out = directory.appendingPathComponent("out").path
        let base = try Self.process(small, out: out)
        let run = try Self.process(large, out: out)
        #expect(base.status == 0 && run.status == 0, "exit statuses \(base.status), \(run.status)")
        let (baseKB, runKB) = (try #require(base.kB), try #require(run.kB))
        let preview = try Data(contentsOf: URL(fileURLWithPath: out).appendingPathComponent("preview.jpg"))
        #expect(preview.count > 10_000, "no preview written")
        let grown = runKB - baseKB
        let perPixel = Double(grown * 1024) / Double(width * height)
        print(
            "HEICProcessMemoryTests: peak RSS \(baseKB) kB (64×64), \(runKB) kB (\(width)×\(height)): "
                + "+\(grown) kB, \(String(format: "%.2f", perPixel)) bytes a pixel")
        // The kept RGBX preview (4 bytes a pixel) and the encoder's coefficients (3 at 4:2:0) are the
        // floor; libheif's RGB image still held at the encodes adds 3 more.
        #expect(perPixel < 9.1, "peak RSS grew by \(grown) kB: \(perPixel) bytes a pixel")
    }
}
