import CJPEG
import CJPEGShim

/// Scan optimization after mozjpeg's `optimize_scans`: every derivative is written with the fixed
/// script (`JPEGEncoder.colorScans` / `grayScans`), then its coefficients are written again with a
/// few other scripts and the file keeps, for the DC scans and for each component's AC scans, the
/// smallest of them (`gd_choose_scans`, jpeg_scan_choice.c). Scans change bytes only: the decoded
/// pixels are the fixed script's. See docs/decisions/061-scan-script-per-image.md.
enum JPEGScanChoice {
    /// The colour probes after the fixed script: DC per component, luma AC in bands 1–2 and 3–63,
    /// chroma likewise, without successive approximation; then luma 1–2 and 3–63 at Al 1 with one
    /// refinement and chroma 1–63 in one scan. Chosen by a sweep over 100 derivatives (decision 061).
    static let colorProbes: [[jpeg_scan_info]] = [
        [
            JPEGEncoder.scan([0], 0, 0, 0, 0), JPEGEncoder.scan([1], 0, 0, 0, 0), JPEGEncoder.scan([2], 0, 0, 0, 0),
            JPEGEncoder.scan([0], 1, 2, 0, 0), JPEGEncoder.scan([0], 3, 63, 0, 0),
            JPEGEncoder.scan([1], 1, 2, 0, 0), JPEGEncoder.scan([1], 3, 63, 0, 0),
            JPEGEncoder.scan([2], 1, 2, 0, 0), JPEGEncoder.scan([2], 3, 63, 0, 0),
        ],
        [
            JPEGEncoder.scan([0], 0, 0, 0, 0), JPEGEncoder.scan([1], 0, 0, 0, 0), JPEGEncoder.scan([2], 0, 0, 0, 0),
            JPEGEncoder.scan([0], 1, 2, 0, 1), JPEGEncoder.scan([0], 3, 63, 0, 1), JPEGEncoder.scan([0], 1, 63, 1, 0),
            JPEGEncoder.scan([1], 1, 63, 0, 0), JPEGEncoder.scan([2], 1, 63, 0, 0),
        ],
    ]

    /// The same luma choices for one component.
    static let grayProbes: [[jpeg_scan_info]] = [
        [JPEGEncoder.scan([0], 0, 0, 0, 0), JPEGEncoder.scan([0], 1, 2, 0, 0), JPEGEncoder.scan([0], 3, 63, 0, 0)],
        [
            JPEGEncoder.scan([0], 0, 0, 0, 0), JPEGEncoder.scan([0], 1, 2, 0, 1), JPEGEncoder.scan([0], 3, 63, 0, 1),
            JPEGEncoder.scan([0], 1, 63, 1, 0),
        ],
    ]

    /// Images of at most this many pixels (thumbnails) try every probe; larger ones (previews) only
    /// the first, which finds most of the saving for half the work (decision 061).
    static let allProbesMaxPixels = 1 << 20

    /// A larger image (a preview) whose fixed-script file is over this many bytes tries no probe.
    /// Reading a file back and writing it again costs in proportion to its bytes, after the last
    /// row, on the derivative's critical path: kleiber's WebP (a 197 kB preview, 1.4% saved) went
    /// from 0.53 to 0.61 of two vips runs with its probe, over #28's 0.6. The detailed photos'
    /// previews (dune, path, elephants: 200–770 kB) save at most 0.3%; the flat ones, where the
    /// saving is (0.7–14%), are 50–160 kB (decision 061, "The cost, bounded").
    static let probedMaxBytes = 160_000

    /// The scripts tried for an image whose fixed-script file has `fileBytes` bytes: the fixed one
    /// first, then the probes its size allows.
    static func scripts(gray: Bool, width: Int, height: Int, fileBytes: Int = 0) -> [[jpeg_scan_info]] {
        let probes = gray ? grayProbes : colorProbes
        let count = width * height <= allProbesMaxPixels ? probes.count : fileBytes > probedMaxBytes ? 0 : 1
        return [gray ? JPEGEncoder.grayScans : JPEGEncoder.colorScans] + probes.prefix(count)
    }

    /// The scripts an image's encoder chooses among as it finishes, the fixed one first, and the
    /// largest fixed-script file for which it tries more than the fixed one: what
    /// `scripts(gray:width:height:fileBytes:)` gives, decided in the shim once the file is written
    /// (`gd_encoder_finish_choosing`, which takes the coefficients from the compressor instead of
    /// reading the file back).
    static func plan(gray: Bool, width: Int, height: Int) -> (scripts: [[jpeg_scan_info]], probedMaxBytes: UInt) {
        let all = width * height <= allProbesMaxPixels
        return (scripts(gray: gray, width: width, height: height), all ? .max : UInt(probedMaxBytes))
    }

    /// `scripts` as the shim takes them, valid inside `body`.
    static func withProbes<R>(_ scripts: [[jpeg_scan_info]], _ body: (UnsafeBufferPointer<gd_scan_script>) -> R) -> R {
        let flat = scripts.flatMap { $0 }
        return flat.withUnsafeBufferPointer { scans in
            var probes: [gd_scan_script] = []
            var offset = 0
            for script in scripts {
                probes.append(
                    gd_scan_script(scans: scans.baseAddress.map { $0 + offset }, scan_count: Int32(script.count)))
                offset += script.count
            }
            return probes.withUnsafeBufferPointer(body)
        }
    }

    /// `jpeg`, written with `scripts[0]`, with the smallest scans among `scripts`; the same pixels.
    static func choose(_ jpeg: [UInt8], scripts: [[jpeg_scan_info]]) throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var length: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let status: gd_status = withProbes(scripts) { probes in
            jpeg.withUnsafeBufferPointer { bytes in
                gd_choose_scans(
                    bytes.baseAddress, UInt(bytes.count), probes.baseAddress, Int32(probes.count), &output, &length,
                    &message, message.count)
            }
        }
        guard status == GD_OK else {
            throw ImageError.encodeFailed(message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        guard let output else { return jpeg }
        defer { gd_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// A derivative written with the fixed script, with its scans chosen (`scripts(gray:width:height:)`).
    static func optimize(_ jpeg: [UInt8], gray: Bool, width: Int, height: Int) throws -> [UInt8] {
        let scripts = scripts(gray: gray, width: width, height: height, fileBytes: jpeg.count)
        guard scripts.count > 1 else { return jpeg }
        return try choose(jpeg, scripts: scripts)
    }
}
