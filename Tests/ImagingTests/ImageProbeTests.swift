import Foundation
import Testing

@testable import Imaging

@Suite struct ImageProbeTests {
    @Test func probe_ReadsSizeAndColorSpace_WhenBaselineColor() throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 120, height: 80))
        let info = try ImageProbe.probe(bytes: jpeg)
        #expect(info.width == 120)
        #expect(info.height == 80)
        #expect(info.components == 3)
        #expect(info.colorSpace == .ycbcr)
        #expect(!info.isProgressive)
        #expect(info.orientation == 1)
        #expect(info.iccProfile == nil)
        #expect(info.takenAt == nil)
    }

    @Test func probe_ReportsProgressiveAndGrayscale() throws {
        let gray = try TestImages.progressive(TestImages.solid(width: 33, height: 17, (90, 90, 90), gray: true))
        let info = try ImageProbe.probe(bytes: gray)
        #expect(info.isProgressive)
        #expect(info.components == 1)
        #expect(info.colorSpace == .grayscale)
    }

    @Test func probe_ReportsCMYKAndYCCK() throws {
        let image = TestImages.solid(width: 16, height: 16, TestImages.red)
        #expect(try ImageProbe.probe(bytes: TestImages.cmyk(image, flavor: .plain)).colorSpace == .cmyk)
        let adobe = try ImageProbe.probe(bytes: TestImages.cmyk(image, flavor: .adobeInverted))
        #expect(adobe.colorSpace == .cmyk)
        #expect(adobe.hasAdobeMarker)
        #expect(try ImageProbe.probe(bytes: TestImages.cmyk(image, flavor: .adobeYCCK)).colorSpace == .ycck)
    }

    @Test(arguments: [true, false])
    func probe_ReadsOrientationAndDate_InEitherByteOrder(littleEndian: Bool) throws {
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(
                orientation: 6, littleEndian: littleEndian, date: "2021:07:04 13:45:10", offset: "+02:00",
                subSeconds: "25"),
            into: TestImages.baseline(TestImages.noise(width: 40, height: 30)))
        let info = try ImageProbe.probe(bytes: jpeg)
        #expect(info.orientation == 6)
        #expect(info.width == 40 && info.height == 30)
        #expect(info.displayWidth == 30 && info.displayHeight == 40)
        // 13:45:10.25 at +02:00 is 11:45:10.25 UTC.
        let expected = try #require(ISO8601DateFormatter().date(from: "2021-07-04T11:45:10Z"))
        let takenAt = try #require(info.takenAt)
        #expect(abs(takenAt.timeIntervalSince(expected) - 0.25) < 0.001)
    }

    @Test func probe_ReadsDateAsUTC_WhenNoOffset() throws {
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(orientation: 1, littleEndian: false, date: "1999:12:31 23:59:59"),
            into: TestImages.baseline(TestImages.noise(width: 8, height: 8)))
        let info = try ImageProbe.probe(bytes: jpeg)
        #expect(info.takenAt == ISO8601DateFormatter().date(from: "1999-12-31T23:59:59Z"))
    }

    @Test func probe_IgnoresInvalidOrientation() throws {
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(orientation: 9, littleEndian: true),
            into: TestImages.baseline(TestImages.noise(width: 8, height: 8)))
        #expect(try ImageProbe.probe(bytes: jpeg).orientation == 1)
    }

    @Test func probe_ReadsTheCameraFromAPP1() throws {
        let jpeg = try TestImages.inserting(
            TestImages.exifSegment(
                orientation: 1, littleEndian: true, make: Array("FUJIFILM".utf8), model: Array("X-T5\u{1}".utf8)),
            into: TestImages.baseline(TestImages.noise(width: 8, height: 8)))
        let info = try ImageProbe.probe(bytes: jpeg)
        #expect(info.cameraMake == "FUJIFILM" && info.cameraModel == "X-T5")
        let plain = try TestImages.baseline(TestImages.noise(width: 8, height: 8))
        #expect(try ImageProbe.probe(bytes: plain).cameraMake == nil)
    }

    @Test func probe_SurvivesGarbageEXIF() throws {
        var state: UInt64 = 7
        for length in [0, 1, 5, 14, 20, 64, 300] {
            var payload: [UInt8] = Array("Exif".utf8) + [0, 0] + [0x49, 0x49, 42, 0, 8, 0, 0, 0]
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1
                payload.append(UInt8(truncatingIfNeeded: state >> 40))
            }
            let segment = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
            let jpeg = try TestImages.inserting(
                segment, into: TestImages.baseline(TestImages.noise(width: 8, height: 8)))
            let info = try ImageProbe.probe(bytes: jpeg)
            #expect((1...8).contains(info.orientation))
        }
    }

    @Test func probe_ReassemblesICCProfile_FromSeveralChunks() throws {
        let profile = TestImages.iccProfile(size: 150_000)  // three APP2 chunks
        let jpeg = try TestImages.progressive(TestImages.noise(width: 16, height: 16), icc: profile)
        let chunks = TestImages.segments(jpeg).filter { $0.code == 0xE2 }
        #expect(chunks.count == 3)
        #expect(try ImageProbe.probe(bytes: jpeg).iccProfile == profile)
    }

    @Test(arguments: [
        ("tiff", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0, 0, 0, 0, 0] as [UInt8]),
        ("gif", Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)),
        ("text", Array("hello, this is not an image\n".utf8)),
        ("empty", []),
    ])
    func probe_RejectsUnknownFormats_AsUnsupportedFormat(name: String, bytes: [UInt8]) throws {
        #expect(throws: ImageError.unsupportedFormat) { try ImageProbe.probe(bytes: bytes) }
        let path = try TestImages.temporaryFile(bytes, name: "file.\(name)")
        #expect(throws: ImageError.unsupportedFormat) { try ImageProbe.probe(fileAt: path) }
        #expect(throws: ImageError.unsupportedFormat) { try ImagePipeline.process(fileAt: path) }
    }

    @Test func probe_RejectsHugeHeader_BeforeDecoding() throws {
        let bomb = TestImages.headerOnly(width: 60_000, height: 60_000)
        #expect(bomb.count < 64)
        let expected = ImageError.tooManyPixels(width: 60_000, height: 60_000, limit: 100_000_000)
        #expect(throws: expected) { try ImageProbe.probe(bytes: bomb) }
        let path = try TestImages.temporaryFile(bomb)
        #expect(throws: expected) { try ImagePipeline.process(fileAt: path) }
    }

    @Test func probe_HonoursConfiguredPixelLimit() throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 100, height: 100))
        #expect(throws: ImageError.tooManyPixels(width: 100, height: 100, limit: 9_999)) {
            try ImageProbe.probe(bytes: jpeg, limits: ImageLimits(maxPixels: 9_999))
        }
        #expect(try ImageProbe.probe(bytes: jpeg, limits: ImageLimits(maxPixels: 10_000)).width == 100)
    }

    @Test func probe_ReadsFile_WhenOnlyTheHeaderIsIntact() throws {
        // Everything after the first scan header is garbage: the probe must not need it.
        let jpeg = try TestImages.baseline(TestImages.noise(width: 64, height: 48))
        let sos = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA })
        let length = Int(jpeg[sos + 2]) << 8 | Int(jpeg[sos + 3])
        let headerOnly = Array(jpeg[..<(sos + 2 + length)]) + [UInt8](repeating: 0x55, count: 10)
        let info = try ImageProbe.probe(fileAt: TestImages.temporaryFile(headerOnly))
        #expect(info.width == 64 && info.height == 48)
    }

    @Test func probe_ReportsTruncated_WhenHeaderIsCut() throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 64, height: 48))
        #expect(throws: ImageError.truncated) { try ImageProbe.probe(bytes: Array(jpeg.prefix(30))) }
    }
}
