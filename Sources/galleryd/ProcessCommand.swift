import ArgumentParser
import Foundation
import GalleryApp
import Imaging

/// `galleryd process INPUT --out DIR`: runs the image pipeline on one file, writes
/// `thumbnail.jpg` and `preview.jpg`, and prints one JSON line with sizes and timings.
struct ProcessCommand: ParsableCommand {
    /// The subcommand name and its one-line help.
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Make thumbnail.jpg and preview.jpg from one JPEG, PNG, WebP, HEIC or AVIF and print a JSON summary.")

    /// The original image.
    @Argument(help: "The original (JPEG, PNG, WebP, HEIC or AVIF).")
    var input: String

    /// Where thumbnail.jpg and preview.jpg go.
    @Option(name: .customLong("out"), help: "Directory for thumbnail.jpg and preview.jpg (created if missing).")
    var outputDirectory: String

    /// DerivativeSpec.thumbnailShortEdge.
    @Option(help: "Shorter displayed edge of the thumbnail, in pixels.")
    var thumbnailSize: Int = 400

    /// DerivativeSpec.previewLongEdge.
    @Option(help: "Longer displayed edge of the preview, in pixels.")
    var previewSize: Int = 2048

    /// DerivativeSpec.quality.
    @Option(help: "JPEG quality of a downscaled preview, 1-100 (an original-size preview: + 2).")
    var quality: Int = 80

    @Option(help: "The thumbnail's JPEG quality, 1-100 (default: --quality + 2).")
    var thumbnailQuality: Int?

    /// DerivativeSpec.quantizer.
    @Option(help: "Who quantizes the DCT coefficients: libjpeg, rounding or trellis.")
    var quantizer: String = JPEGQuantizer.libjpeg.rawValue

    /// ImageLimits.maxPixels.
    @Option(help: "Refuse images with more pixels than this.")
    var maxPixels: Int = ImageLimits().maxPixels

    /// Rejects sizes and qualities out of range before any work.
    func validate() throws {
        guard thumbnailSize > 0, previewSize > 0 else { throw ValidationError("sizes must be positive") }
        guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1-100") }
        if let thumbnailQuality, !(1...100).contains(thumbnailQuality) {
            throw ValidationError("--thumbnail-quality must be 1-100")
        }
        guard JPEGQuantizer(rawValue: quantizer) != nil else {
            throw ValidationError(
                "--quantizer must be one of \(JPEGQuantizer.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive") }
    }

    /// Runs the pipeline, writes both files, prints the JSON line; errors go to stderr, exit 1.
    func run() throws {
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            let spec = DerivativeSpec(
                thumbnailShortEdge: thumbnailSize, previewLongEdge: previewSize, quality: quality,
                quantizer: JPEGQuantizer(rawValue: quantizer) ?? .libjpeg, thumbnailQuality: thumbnailQuality)
            let result = try ImagePipeline.process(
                fileAt: input, spec: spec, limits: ImageLimits(maxPixels: maxPixels))
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
            var timings = result.timings
            let writeStart = DispatchTime.now().uptimeNanoseconds
            try write(result.thumbnail.jpeg, to: "thumbnail.jpg")
            try write(result.preview.jpeg, to: "preview.jpg")
            let now = DispatchTime.now().uptimeNanoseconds
            timings.append(("write", Double(now - writeStart) / 1e6))
            timings.append(("total", Double(now - started) / 1e6))
            print(summary(result, timings: timings))
        } catch {
            FileHandle.standardError.write(Data("galleryd process: \(input): \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func write(_ bytes: [UInt8], to name: String) throws {
        let url = URL(fileURLWithPath: outputDirectory).appendingPathComponent(name)
        do {
            try Data(bytes).write(to: url, options: .atomic)
        } catch {
            throw ImageError.io("\(url.path): \(error.localizedDescription)")
        }
    }

    /// One JSON object on one line; keys in a fixed order so scripts can also grep it.
    private func summary(_ result: ProcessedImage, timings: [(stage: String, milliseconds: Double)]) -> String {
        let info = result.info
        let inputBytes = (try? FileManager.default.attributesOfItem(atPath: input)[.size] as? Int) ?? nil
        func output(_ image: EncodedImage) -> String {
            "{\"width\":\(image.width),\"height\":\(image.height),\"bytes\":\(image.jpeg.count)}"
        }
        let ms = timings.map { "\(ParseJSONWriter.quoted($0.stage)):\(String(format: "%.2f", $0.milliseconds))" }
        var fields = [
            "\"input\":\(ParseJSONWriter.quoted(input))",
            "\"bytes\":\(inputBytes.map(String.init) ?? "null")",
            "\"format\":\(ParseJSONWriter.quoted(info.format.rawValue))",
            "\"width\":\(info.width)", "\"height\":\(info.height)",
            "\"displayWidth\":\(info.displayWidth)", "\"displayHeight\":\(info.displayHeight)",
            "\"orientation\":\(info.orientation)",
            "\"colorSpace\":\(ParseJSONWriter.quoted(info.colorSpace.rawValue))",
            "\"progressive\":\(info.isProgressive)",
            "\"thumbnail\":\(output(result.thumbnail))",
            "\"preview\":\(output(result.preview))",
            "\"dominantColor\":\(ParseJSONWriter.quoted(result.dominantColor))",
            "\"thumbnailFrom\":\(ParseJSONWriter.quoted(result.thumbnailSource.rawValue))",
        ]
        if let takenAt = info.takenAt {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            fields.append("\"takenAt\":\(ParseJSONWriter.quoted(formatter.string(from: takenAt)))")
        }
        if let make = info.cameraMake { fields.append("\"cameraMake\":\(ParseJSONWriter.quoted(make))") }
        if let model = info.cameraModel { fields.append("\"cameraModel\":\(ParseJSONWriter.quoted(model))") }
        fields.append("\"ms\":{\(ms.joined(separator: ","))}")
        fields.append("\"peakRSSKB\":\(Self.peakRSSKB().map(String.init) ?? "null")")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// This process's peak resident set so far, in kB: `VmHWM` in /proc/self/status (nil where there is
    /// none). Unlike `getrusage`'s `ru_maxrss` it starts afresh at exec, so it does not carry the peak of
    /// the process that started this one (a test runner, say).
    static func peakRSSKB() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
    }
}
