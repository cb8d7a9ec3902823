import CJPEG
import CJPEGShim
import Foundation
import Testing

@testable import Imaging

/// Scan optimization (`JPEGScanChoice`, decision 061): per image the smallest scans among the fixed
/// script and the probes, never larger than the fixed script's file and decoding to its pixels.
@Suite struct JPEGScanChoiceTests {
    /// One scan as its SOS header gives it: components in the scan, Ss, Se, Ah, Al.
    struct ScanHeader: Hashable {
        var components: Int
        var ss: Int
        var se: Int
        var ah: Int
        var al: Int
    }

    static func scanHeaders(_ jpeg: [UInt8]) -> [ScanHeader] {
        TestImages.segments(jpeg).filter { $0.code == 0xDA }.map { segment in
            let payload = Array(segment.payload)
            let count = Int(payload[0])
            let tail = 1 + 2 * count
            return ScanHeader(
                components: count, ss: Int(payload[tail]), se: Int(payload[tail + 1]), ah: Int(payload[tail + 2] >> 4),
                al: Int(payload[tail + 2] & 15))
        }
    }

    static func headers(_ script: [jpeg_scan_info]) -> [ScanHeader] {
        script.map {
            ScanHeader(
                components: Int($0.comps_in_scan), ss: Int($0.Ss), se: Int($0.Se), ah: Int($0.Ah), al: Int($0.Al))
        }
    }

    /// Odd and tiny sizes (partial blocks and MCUs), a thumbnail and a size over the all-probes limit.
    static let sizes: [(width: Int, height: Int)] = [(1, 1), (7, 9), (33, 47), (240, 160), (1300, 900)]

    @Test func chosenScans_AreNeverLarger_AndDecodeToTheFixedScriptsPixels() throws {
        for gray in [false, true] {
            for (width, height) in Self.sizes {
                for image in [
                    JPEGQuantizerTests.scene(width: width, height: height, gray: gray),
                    gray
                        ? JPEGQuantizerTests.scene(width: width, height: height, gray: true, seed: 3)
                        : TestImages.noise(width: width, height: height),
                ] {
                    let fixed = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, optimizeScans: false)
                    let chosen = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil)
                    #expect(chosen.count <= fixed.count, "\(width)×\(height) gray \(gray)")
                    #expect(
                        Self.scanHeaders(fixed) == Self.headers(gray ? JPEGEncoder.grayScans : JPEGEncoder.colorScans))
                    let pixels = try TestImages.decode(chosen)
                    #expect(pixels.bytes == (try TestImages.decode(fixed)).bytes, "\(width)×\(height) gray \(gray)")
                    #expect(pixels.width == width && pixels.height == height)
                }
            }
        }
    }

    /// Smooth gray shading with a soft ripple: few AC coefficients, where bands without successive
    /// approximation beat the fixed script's.
    static func smoothGray(width: Int, height: Int) -> PixelBuffer {
        var image = PixelBuffer(width: width, height: height, channels: 1)
        for y in 0..<height {
            for x in 0..<width {
                let ramp: Double = 60 + 120 * Double(x + y) / Double(width + height)
                let ripple: Double = 6 * sin(Double(x) / 9) * cos(Double(y) / 13)
                image.bytes[y * width + x] = UInt8((ramp + ripple).rounded())
            }
        }
        return image
    }

    @Test func photoLikeImages_GetSmallerFiles_WithOtherScans() throws {
        for gray in [false, true] {
            let image =
                gray ? Self.smoothGray(width: 320, height: 240) : JPEGQuantizerTests.scene(width: 320, height: 240)
            let fixed = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, optimizeScans: false)
            let chosen = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil)
            #expect(chosen.count < fixed.count, "gray \(gray)")
            #expect(Self.scanHeaders(chosen) != Self.scanHeaders(fixed))
            // DC first, then every scan is one of the candidates' scans.
            let headers = Self.scanHeaders(chosen)
            let candidates = Set(JPEGScanChoice.scripts(gray: gray, width: 320, height: 240).flatMap(Self.headers))
            #expect(headers.allSatisfy { candidates.contains($0) })
            let dcScans = headers.prefix { $0.ss == 0 }.count
            #expect(dcScans >= 1 && headers.dropFirst(dcScans).allSatisfy { $0.ss > 0 })
        }
    }

    @Test func thumbnails_TryEveryProbe_LargerImagesTheFirst() {
        for gray in [false, true] {
            let probes = gray ? JPEGScanChoice.grayProbes : JPEGScanChoice.colorProbes
            let fixed = gray ? JPEGEncoder.grayScans : JPEGEncoder.colorScans
            let small = JPEGScanChoice.scripts(gray: gray, width: 600, height: 400)
            #expect(small.count == 1 + probes.count)
            #expect(Self.headers(small[0]) == Self.headers(fixed))
            let large = JPEGScanChoice.scripts(gray: gray, width: 2048, height: 1536)
            #expect(large.count == 2)
            #expect(Self.headers(large[1]) == Self.headers(probes[0]))
        }
    }

    @Test func detailedLargeImages_TryNoProbe_AndKeepTheirFile() throws {
        // A preview's file over `probedMaxBytes` tries no probe, one at it the first; a thumbnail
        // tries every probe whatever its bytes.
        let limit = JPEGScanChoice.probedMaxBytes
        #expect(JPEGScanChoice.scripts(gray: false, width: 2048, height: 1536, fileBytes: limit + 1).count == 1)
        #expect(JPEGScanChoice.scripts(gray: false, width: 2048, height: 1536, fileBytes: limit).count == 2)
        #expect(JPEGScanChoice.scripts(gray: true, width: 2048, height: 1536, fileBytes: 800_000).count == 1)
        #expect(
            JPEGScanChoice.scripts(gray: false, width: 600, height: 400, fileBytes: 600_000).count
                == 1 + JPEGScanChoice.colorProbes.count)
        // The file itself comes back as it is, not read back and written again.
        let bytes =
            Array("not a JPEG at all, and never parsed".utf8)
            + [UInt8](repeating: 0xA5, count: JPEGScanChoice.probedMaxBytes)
        #expect(try JPEGScanChoice.optimize(bytes, gray: false, width: 2048, height: 1536) == bytes)
        #expect(throws: ImageError.self) { try JPEGScanChoice.optimize(bytes, gray: false, width: 600, height: 400) }
    }

    @Test func streamEncoder_ChoosesTheOneShotEncodersScans() throws {
        for gray in [false, true] {
            let image = JPEGQuantizerTests.scene(width: 150, height: 97, gray: gray)
            for optimize in [false, true] {
                let stream = try JPEGStreamEncoder(
                    width: image.width, height: image.height, channels: image.channels, quality: 80, iccProfile: nil,
                    optimizeScans: optimize)
                try stream.write(image)
                let streamed = try stream.finish()
                let oneShot = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, optimizeScans: optimize)
                #expect(streamed == oneShot, "gray \(gray) optimize \(optimize)")
            }
        }
    }

    /// The encoder's scans chosen as it finishes, from its own coefficient arrays (decision 065,
    /// session 20): the bytes of the fixed-script file read back and chosen (`JPEGScanChoice.optimize`),
    /// for libjpeg's quantizer and the coefficient path's, colour and gray, odd sizes, a thumbnail,
    /// a preview probed and one over `probedMaxBytes` (noise), one-shot and streamed.
    @Test func finishing_ChoosesFromTheCompressorsCoefficients_TheReadBacksBytes() throws {
        for gray in [false, true] {
            for (width, height) in Self.sizes {
                for (index, image) in [
                    JPEGQuantizerTests.scene(width: width, height: height, gray: gray),
                    gray
                        ? JPEGQuantizerTests.scene(width: width, height: height, gray: true, seed: 3)
                        : TestImages.noise(width: width, height: height),
                ].enumerated() {
                    for quantizer in [JPEGQuantizer.libjpeg, .rounding, .trellis] {
                        let name = "\(width)×\(height) gray \(gray) image \(index) \(quantizer)"
                        let fixed = try JPEGEncoder.encode(
                            image, quality: 80, quantizer: quantizer, iccProfile: nil, optimizeScans: false)
                        let readBack = try JPEGScanChoice.optimize(fixed, gray: gray, width: width, height: height)
                        let oneShot = try JPEGEncoder.encode(image, quality: 80, quantizer: quantizer, iccProfile: nil)
                        #expect(oneShot == readBack, "\(name)")
                        let stream = try JPEGStreamEncoder(
                            width: width, height: height, channels: image.channels, quality: 80, quantizer: quantizer,
                            iccProfile: nil)
                        try stream.write(image, rows: height)
                        #expect(try stream.finish() == readBack, "\(name)")
                        // Probes are written from the kept coefficients whenever any is tried: a
                        // thumbnail's always beside the finish, a preview's when its coefficients
                        // promise a file under the limit (these scenes' do not: after the finish).
                        let probed = JPEGScanChoice.scripts(
                            gray: gray, width: width, height: height, fileBytes: fixed.count)
                        #expect(stream.choseScansFromCoefficients == (probed.count > 1), "\(name)")
                        if width * height <= JPEGScanChoice.allProbesMaxPixels {
                            #expect(stream.wroteProbesBesideTheFinish == (probed.count > 1), "\(name)")
                        } else if probed.count == 1 {
                            #expect(!stream.wroteProbesBesideTheFinish, "\(name)")
                        }
                    }
                }
            }
        }
        // The noise preview is over the limit (its file kept as written), the scene's under it. Probes
        // started beside the finish of one over the limit are cancelled: the file is the fixed one.
        let noise = TestImages.noise(width: 1300, height: 900)
        let scene = JPEGQuantizerTests.scene(width: 1300, height: 900)
        for (image, probed) in [(noise, false), (scene, true)] {
            let fixed = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, optimizeScans: false)
            #expect((fixed.count <= JPEGScanChoice.probedMaxBytes) == probed)
            let stream = try JPEGStreamEncoder(width: 1300, height: 900, channels: 4, quality: 80, iccProfile: nil)
            stream.setProbeSpeculation(tenths: 1000)
            try stream.write(image, rows: 900)
            let expected = try JPEGScanChoice.optimize(fixed, gray: false, width: 1300, height: 900)
            #expect(try stream.finish() == expected)
            #expect(stream.wroteProbesBesideTheFinish == probed)
        }
    }

    @Test func theFixedScriptAlone_KeepsTheFile() throws {
        let image = JPEGQuantizerTests.scene(width: 64, height: 48)
        let fixed = try JPEGEncoder.encode(
            image, quality: 80, iccProfile: TestImages.iccProfile(size: 500), optimizeScans: false)
        #expect(try JPEGScanChoice.choose(fixed, scripts: [JPEGEncoder.colorScans]) == fixed)
        // The ICC profile and every other header segment are kept.
        let chosen = try JPEGScanChoice.choose(
            fixed, scripts: JPEGScanChoice.scripts(gray: false, width: 64, height: 48))
        let headerCodes = { (jpeg: [UInt8]) in TestImages.segments(jpeg).map(\.code).filter { $0 != 0xDA && $0 != 0xC4 }
        }
        #expect(headerCodes(chosen) == headerCodes(fixed))
        #expect(try ImageProbe.probe(bytes: chosen).iccProfile == TestImages.iccProfile(size: 500))
    }

    @Test func choose_RefusesWhatItCannotRewrite_WithAnError() throws {
        let image = JPEGQuantizerTests.scene(width: 40, height: 30)
        let fixed = try JPEGEncoder.encode(image, quality: 80, iccProfile: nil, optimizeScans: false)
        let scripts = JPEGScanChoice.scripts(gray: false, width: 40, height: 30)
        let incompleteLuma = [
            JPEGEncoder.scan([0, 1, 2], 0, 0, 0, 0), JPEGEncoder.scan([0], 1, 8, 0, 0),
        ]
        let cases: [(String, [UInt8], [[jpeg_scan_info]])] = [
            ("garbage", [0xFF, 0xD8, 0x00, 0x01, 0x02], scripts),
            ("empty", [], scripts),
            ("truncated", Array(fixed.prefix(fixed.count / 2)), scripts),
            ("baseline", try TestImages.baseline(image), scripts),
            ("another script", fixed, Array(scripts.dropFirst())),
            ("incomplete probe", fixed, [JPEGEncoder.colorScans, incompleteLuma]),
            ("no scripts", fixed, []),
            ("an empty script", fixed, [[]]),
            ("an empty probe", fixed, [JPEGEncoder.colorScans, []]),
            ("gray scripts for colour", fixed, JPEGScanChoice.scripts(gray: true, width: 40, height: 30)),
        ]
        for (name, bytes, scripts) in cases {
            #expect(throws: ImageError.self, "\(name)") { try JPEGScanChoice.choose(bytes, scripts: scripts) }
        }
    }

    @Test func baselineCMYKAndGivenScripts_AreWrittenAsAsked() throws {
        let image = TestImages.quadrants(
            width: 48, height: 32, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow)
        let baseline = try TestImages.baseline(image)
        #expect(TestImages.segments(baseline).contains { $0.code == 0xC0 })
        #expect(Self.scanHeaders(baseline).count == 1)
        for flavor in [TestImages.CMYKFlavor.plain, .adobeInverted, .adobeYCCK] {
            let cmyk = try TestImages.cmyk(image, flavor: flavor)
            #expect(Self.scanHeaders(cmyk).count == 1, "\(flavor)")
        }
        let given = try JPEGEncoder.encode(
            image, inputColorSpace: JCS_EXT_RGBX, jpegColorSpace: JCS_YCbCr, quality: 80, quantTable: nil,
            scans: JPEGEncoder.colorScans, subsampleChroma: true, writeAdobe: false, iccProfile: nil)
        #expect(Self.scanHeaders(given) == Self.headers(JPEGEncoder.colorScans))
    }
}
