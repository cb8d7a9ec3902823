// `imaging-decode FILE [--full]`: the decode alone of an original, as galleryd's pipeline decodes
// it, for bench/imaging-formats.sh's decode columns (#28: "decode time alone vs heif-convert/dwebp").
//
// The pipeline's "decode" lap is not that for every format: a WebP and a non-interlaced PNG are
// decoded while they are resampled (decisions 039, 055), so their lap holds only the header
// parse, and the rest of their decode is inside "resize". This tool opens the same decoder the
// pipeline opens (`WebPDecoder.rows`, `PNGRowDecoder` (interlaced files whole), `HEIFFile.decode`,
// `JPEGDecoder`) for the same plan (`DerivativePlan`: a WebP shrunk by libwebp to the preview's
// size, a JPEG at its DCT scale), drains every row and discards it; `--full` decodes a WebP or
// JPEG at the file's full size instead (PNG and HEIF are always decoded at full size). Output:
// one JSON line with the decoded size and `ms.decode` (opening the decoder to its last row;
// the probe is timed apart, as the pipeline's "probe" lap is).
//
// bench/imaging-process.sh builds it with the Imaging sources in one module (the decoders are
// internal to Imaging), at -O as SwiftPM's release build does.
import Foundation

@main
enum ImagingDecode {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count == 1 || (arguments.count == 2 && arguments[1] == "--full") else {
            FileHandle.standardError.write(Data("usage: imaging-decode FILE [--full]\n".utf8))
            exit(2)
        }
        do {
            print(try decode(path: arguments[0], full: arguments.count == 2))
        } catch {
            FileHandle.standardError.write(Data("imaging-decode: \(arguments[0]): \(error)\n".utf8))
            exit(1)
        }
    }

    /// Decodes the file at `path` and returns the JSON line.
    static func decode(path: String, full: Bool) throws -> String {
        let limits = ImageLimits()
        let t0 = Stopwatch.nanoseconds()
        let info = try ImageProbe.probe(fileAt: path, limits: limits)
        let t1 = Stopwatch.nanoseconds()
        let plan = DerivativePlan(info: info, spec: DerivativeSpec())
        var rows = 0
        var check = 0
        let size: (width: Int, height: Int)
        switch info.format {
        case .jpeg:
            let decoder = try JPEGDecoder(path: path, maxScans: limits.maxScans)
            try decoder.readHeader()
            let format = JPEGDecoder.OutputFormat(for: info.colorSpace)
            size = try decoder.start(scale: full ? 8 : plan.scale, format: format)
            let band = 16
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: band * size.width * format.bytesPerPixel)
            defer { buffer.deallocate() }
            let pointers = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: band)
            defer { pointers.deallocate() }
            for r in 0..<band { pointers[r] = buffer + r * size.width * format.bytesPerPixel }
            while rows < size.height {
                let count = try decoder.readScanlines(into: pointers, count: min(band, size.height - rows))
                guard count > 0 else { throw ImageError.decodeFailed("decoder returned no rows") }
                check &+= Int(buffer[0])
                rows += count
            }
            try decoder.finish()
        case .png, .webp, .heif, .avif:
            let raster: any RasterRows
            switch info.format {
            case .png:
                // An interlaced file is read whole by the same decoder (decision 039, session 19).
                raster = try PNGRowDecoder.open(fileAt: path, bytes: nil, limits: limits)
            case .webp:
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ImageError.io("\(path): cannot read")
                }
                let targets = full ? [(width: info.width, height: info.height)] : plan.decodeTargets
                raster = try WebPDecoder.rows(bytes: [UInt8](data), limits: limits, covering: targets)
            default:
                raster = try HEIFFile(path: path).decode()
            }
            try raster.forEachRun { first, stride, count in
                check &+= Int(first[0]) &+ Int(first[(count - 1) * stride])
                rows += count
            }
            size = (raster.width, raster.height)
        }
        let t2 = Stopwatch.nanoseconds()
        guard rows == size.height else { throw ImageError.decodeFailed("\(rows) rows of \(size.height)") }
        return "{\"format\":\"\(info.format.rawValue)\",\"width\":\(size.width),\"height\":\(size.height),"
            + "\"fileWidth\":\(info.width),\"fileHeight\":\(info.height),\"check\":\(check),"
            + "\"ms\":{\"probe\":\(String(format: "%.2f", Double(t1 - t0) / 1e6)),"
            + "\"decode\":\(String(format: "%.2f", Double(t2 - t1) / 1e6))}}"
    }
}
