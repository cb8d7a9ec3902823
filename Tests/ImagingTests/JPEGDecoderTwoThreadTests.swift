import Foundation
import Testing

@testable import Imaging

/// The two-thread decode of progressive colour files (decision 055) gives the one-thread decode's
/// rows byte for byte and its errors exactly; other files keep the one-thread path.
@Suite struct JPEGDecoderTwoThreadTests {
    /// What one decode gave: every row, or the error, and whether it ran on two threads.
    struct Outcome: Equatable {
        var rows: [UInt8] = []
        var size = (width: 0, height: 0)
        var error: ImageError?
        var twoThreads = false

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.rows == b.rows && a.size == b.size && a.error == b.error
        }
    }

    /// Decodes `jpeg` at `scale`/8 from memory (or from a file), in one go as the pipeline does.
    static func decode(
        _ jpeg: [UInt8], scale: Int = 8, twoThreadMinimumBytes: Int, fromFile: Bool = false, maxScans: Int = 1000
    ) throws -> Outcome {
        var outcome = Outcome()
        do {
            let decoder =
                fromFile
                ? try JPEGDecoder(
                    path: try TestImages.temporaryFile(jpeg), maxScans: maxScans,
                    twoThreadMinimumBytes: twoThreadMinimumBytes)
                : try JPEGDecoder(bytes: jpeg, maxScans: maxScans, twoThreadMinimumBytes: twoThreadMinimumBytes)
            try decoder.readHeader()
            let gray = try ImageProbe.probe(bytes: jpeg).components == 1
            defer { outcome.twoThreads = decoder.decodedOnTwoThreads }
            let size = try decoder.start(scale: scale, format: gray ? .gray : .rgbx)
            outcome.size = size
            let stride = size.width * (gray ? 1 : 4)
            outcome.rows = [UInt8](repeating: 0, count: stride * size.height)
            try outcome.rows.withUnsafeMutableBufferPointer { buffer in
                var rows = (0..<16).map { _ in buffer.baseAddress }
                var y = 0
                while y < size.height {
                    let count = min(16, size.height - y)
                    for i in 0..<count { rows[i] = buffer.baseAddress! + (y + i) * stride }
                    y += try decoder.readScanlines(into: &rows, count: count)
                }
            }
            try decoder.finish()
        } catch let error as ImageError {
            outcome.error = error
        }
        return outcome
    }

    /// A progressive file from libjpeg-turbo's `cjpeg` (its standard scan script, or `scans` in
    /// cjpeg's `-scans` syntax), with the chroma sampling and restart interval given (`-sample
    /// 2x2`: 4:2:0, `2x1`: 4:2:2, `1x1`: 4:4:4).
    static func cjpeg(_ image: PixelBuffer, sample: String, restart: String? = nil, scans: String? = nil) throws
        -> [UInt8]
    {
        var ppm = Array("P6\n\(image.width) \(image.height)\n255\n".utf8)
        for i in 0..<image.width * image.height { ppm += image.bytes[4 * i..<4 * i + 3] }
        var options = ["-quality", "90", "-progressive", "-sample", sample] + (restart.map { ["-restart", $0] } ?? [])
        if scans != nil { options += ["-scans", "{1}"] }
        return try FixtureTools.run(
            "cjpeg", options + ["-outfile", "{out}", "{0}"],
            inputs: [("in.ppm", ppm)] + (scans.map { [("scans.txt", Array($0.utf8))] } ?? []), output: "out.jpg")
    }

    static let samplings = ["2x2", "2x1", "1x1"]

    @Test(arguments: samplings)
    func rows_AreTheOneThreadRows_AtEveryScale(sample: String) throws {
        let image = TestImages.noise(width: 203, height: 117)
        for jpeg in [try Self.cjpeg(image, sample: sample), try Self.cjpeg(image, sample: sample, restart: "3B")] {
            for scale in [1, 2, 4, 8] {
                let one = try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: -1)
                let two = try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: 0)
                #expect(one.error == nil && !one.twoThreads)
                #expect(two.twoThreads, "\(sample) at \(scale)/8")
                #expect(two == one, "\(sample) at \(scale)/8")
            }
            let file = try Self.decode(jpeg, twoThreadMinimumBytes: 0, fromFile: true)
            #expect(file.twoThreads)
            #expect(file == (try Self.decode(jpeg, twoThreadMinimumBytes: -1)))
        }
    }

    @Test func rows_AreTheOneThreadRows_ForThePipelinesOwnEncoder_AtOddSizes() throws {
        for (width, height) in [(1, 1), (17, 9), (333, 251)] {
            let jpeg = try TestImages.progressive(TestImages.noise(width: width, height: height))
            for scale in [1, 2, 4, 8] {
                let two = try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: 0)
                #expect(two.twoThreads)
                #expect(two == (try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: -1)), "\(width)×\(height)")
            }
        }
    }

    /// DC scans of one component each still split (the luma half latches every table where the
    /// file does); a script that stops short of the last bit keeps one thread, where libjpeg's
    /// block smoothing applies and each half would smooth without the other's coefficients.
    @Test func scanScripts_SplitOnlyWhenEveryCoefficientIsComplete() throws {
        let image = TestImages.noise(width: 120, height: 90)
        let separateDC = "0: 0-0, 0, 0; 1: 0-0, 0, 0; 2: 0-0, 0, 0; 2: 1-63, 0, 0; 0: 1-63, 0, 0; 1: 1-63, 0, 0;"
        let incomplete = "0,1,2: 0-0, 0, 0; 0: 1-63, 0, 1; 1: 1-63, 0, 0; 2: 1-63, 0, 0;"
        for (script, splits) in [(separateDC, true), (incomplete, false)] {
            let jpeg = try Self.cjpeg(image, sample: "2x2", scans: script)
            for scale in [2, 8] {
                let two = try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: 0)
                #expect(two.twoThreads == splits, "\(script)")
                #expect(two == (try Self.decode(jpeg, scale: scale, twoThreadMinimumBytes: -1)), "\(script)")
            }
        }
    }

    @Test func grayBaselineAndSmallFiles_KeepOneThread() throws {
        let colour = TestImages.noise(width: 64, height: 48)
        var gray = PixelBuffer(width: 64, height: 48, channels: 1)
        for i in 0..<gray.bytes.count { gray.bytes[i] = colour.bytes[4 * i] }
        for jpeg in [try TestImages.progressive(gray), try TestImages.baseline(colour)] {
            let outcome = try Self.decode(jpeg, twoThreadMinimumBytes: 0)
            #expect(outcome.error == nil)
            #expect(!outcome.twoThreads)
        }
        let small = try TestImages.progressive(colour)
        #expect(small.count < JPEGDecoder.twoThreadMinimumBytes)
        #expect(!(try Self.decode(small, twoThreadMinimumBytes: JPEGDecoder.twoThreadMinimumBytes)).twoThreads)
        #expect((try Self.decode(small, twoThreadMinimumBytes: small.count)).twoThreads)
    }

    /// Cut files, an EOI in the middle of each part of the file (luma and chroma scans alike) and
    /// flipped bytes: each must end exactly as the one-thread decode does, from memory and from a file.
    @Test(arguments: samplings)
    func damagedFiles_EndAsTheOneThreadDecodeDoes(sample: String) throws {
        let jpeg = try Self.cjpeg(TestImages.noise(width: 160, height: 96), sample: sample)
        var damaged: [[UInt8]] = []
        for tenth in 1...9 {
            let at = jpeg.count * tenth / 10
            damaged.append(Array(jpeg.prefix(at)))
            var eoi = jpeg
            eoi[at] = 0xFF
            eoi[at + 1] = 0xD9
            damaged.append(eoi)
            var flipped = jpeg
            flipped[at] ^= 0x5A
            damaged.append(flipped)
        }
        var failures = 0
        for bytes in damaged {
            let one = try Self.decode(bytes, twoThreadMinimumBytes: -1)
            #expect(try Self.decode(bytes, twoThreadMinimumBytes: 0) == one)
            #expect(try Self.decode(bytes, twoThreadMinimumBytes: 0, fromFile: true) == one)
            if one.error != nil { failures += 1 }
        }
        #expect(failures >= 18)  // every cut and every EOI at least
    }

    @Test func tooManyScans_IsReportedAsBefore() throws {
        let jpeg = try Self.cjpeg(TestImages.noise(width: 64, height: 64), sample: "2x2")
        let one = try Self.decode(jpeg, twoThreadMinimumBytes: -1, maxScans: 4)
        guard case .tooManyScans = one.error else {
            Issue.record("expected .tooManyScans, got \(String(describing: one.error))")
            return
        }
        #expect(try Self.decode(jpeg, twoThreadMinimumBytes: 0, maxScans: 4) == one)
    }
}
