import CJPEG
import Foundation
import Testing

@testable import Imaging

/// The preview of an original kept at its own size is quantized on the original's steps.
@Suite struct QuantizationTablesTests {
    /// libjpeg's Annex K luma table at quality 60, natural order (what a camera-like original uses).
    static let annexKLuma60: [UInt16] = QuantizationTables.scaled(
        [
            16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55,
            14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
            18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
            49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
        ], quality: 60
    ).map { UInt16($0) }

    static func info(
        width: Int = 1800, height: Int = 1200, orientation: Int = 1, sampling: [(Int, Int)] = [(2, 2), (1, 1), (1, 1)],
        steps: [UInt16] = annexKLuma60, colorSpace: ImageColorSpace = .ycbcr
    ) -> ImageInfo {
        ImageInfo(
            width: width, height: height, orientation: orientation, components: sampling.count, colorSpace: colorSpace,
            isProgressive: false,
            componentQuantization: sampling.map {
                ComponentQuantization(horizontalSampling: $0.0, verticalSampling: $0.1, steps: steps)
            })
    }

    @Test func aligned_KeepsCoarserOriginalSteps_AndTakesTheLargestMultipleNotCoarserThanOurs() {
        var original = [UInt16](repeating: 4, count: 64)
        original[0] = 9
        original[1] = 1
        original[2] = 200
        var ours = [UInt32](repeating: 9, count: 64)
        ours[0] = 6
        ours[1] = 7
        ours[2] = 255
        let aligned = QuantizationTables.aligned(ours, to: original, transposed: false)!
        #expect(aligned[0] == 9)  // the original is coarser: keep its step
        #expect(aligned[1] == 7)  // step 1: ours exactly
        #expect(aligned[2] == 200)  // 2 × 200 would not fit a baseline table
        #expect(aligned[3] == 8)  // 9 / 4 → 2 × 4
        #expect(QuantizationTables.aligned(ours, to: [UInt16](repeating: 300, count: 64), transposed: false) == nil)
    }

    /// Robidoux's table scaled like libjpeg, chroma 3 qualities up, the luma DC step 4 up.
    @Test func standard_ScalesRobidouxWithAFinerLumaDCStep() {
        let tables = QuantizationTables(quality: 80)
        #expect(
            Array(tables.luma[1...]) == Array(QuantizationTables.scaled(JPEGEncoder.robidouxTable, quality: 80)[1...]))
        #expect(tables.luma[0] == 5)  // 16 at quality 84; 6 at 80
        #expect(tables.chroma == QuantizationTables.scaled(JPEGEncoder.robidouxTable, quality: 83))
        #expect(QuantizationTables(quality: 80, gray: true).chroma == nil)
        #expect(QuantizationTables.scaled([16, 400], quality: 100) == [1, 1])
        #expect(QuantizationTables.scaled([16, 400], quality: 1) == [255, 255])
    }

    @Test func aligned_TransposesTheOriginalTable_ForQuarterTurns() {
        let original = (0..<64).map { UInt16(1 + $0) }
        let ours = [UInt32](repeating: 1, count: 64)
        let aligned = QuantizationTables.aligned(ours, to: original, transposed: true)!
        for row in 0..<8 {
            for column in 0..<8 { #expect(aligned[row * 8 + column] == UInt32(original[column * 8 + row])) }
        }
    }

    /// 1800×1200 at 4:2:0: the width is whole luma blocks (8) but not whole chroma blocks (16).
    @Test(arguments: [
        (1, true, true), (2, true, false), (3, true, false), (4, true, true),
        (5, true, true), (6, true, true), (7, true, false), (8, true, false),
    ])
    func init_AlignsOnlyTheGridsThatStayInPlace(orientation: Int, luma: Bool, chroma: Bool) throws {
        let tables = try #require(QuantizationTables(aligningTo: Self.info(orientation: orientation), quality: 80))
        let ours = QuantizationTables(quality: 80).luma
        let oursChroma = QuantizationTables(quality: 80).chroma!
        let original =
            orientation >= 5
            ? (0..<64).map { Self.annexKLuma60[($0 % 8) * 8 + $0 / 8] } : Self.annexKLuma60
        #expect((tables.luma != ours) == luma)
        #expect((tables.chroma != oursChroma) == chroma)
        if luma {
            for k in 0..<64 { #expect(tables.luma[k] % UInt32(original[k]) == 0) }
        }
    }

    @Test func init_ReturnsNil_WhenNoGridStaysInPlace() {
        // 1804 is not whole luma blocks, and orientation 2 mirrors it.
        #expect(QuantizationTables(aligningTo: Self.info(width: 1804, orientation: 2), quality: 80) == nil)
        #expect(QuantizationTables(aligningTo: Self.info(width: 1804, orientation: 1), quality: 80) != nil)
    }

    @Test func init_AlignsLumaOnly_WhenTheOriginalIsNotFourTwoZero() throws {
        let tables = try #require(
            QuantizationTables(aligningTo: Self.info(sampling: [(1, 1), (1, 1), (1, 1)]), quality: 80))
        #expect(tables.chroma == QuantizationTables(quality: 80).chroma)
        #expect(tables.luma != QuantizationTables(quality: 80).luma)
    }

    @Test func init_HandlesGray_AndRefusesCMYKOrMissingTables() {
        let gray = QuantizationTables(aligningTo: Self.info(sampling: [(1, 1)], colorSpace: .grayscale), quality: 80)
        #expect(gray != nil && gray?.chroma == nil)
        #expect(
            QuantizationTables(
                aligningTo: Self.info(sampling: [(1, 1), (1, 1), (1, 1), (1, 1)], colorSpace: .cmyk), quality: 80)
                == nil)
        var missing = Self.info()
        missing.componentQuantization = []
        #expect(QuantizationTables(aligningTo: missing, quality: 80) == nil)
    }

    @Test func probe_ReadsEachComponentsTableAndSampling() throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 64, height: 48), quality: 60)
        let info = try ImageProbe.probe(bytes: jpeg)
        #expect(info.componentQuantization.map(\.horizontalSampling) == [2, 1, 1])
        #expect(info.componentQuantization.map(\.verticalSampling) == [2, 1, 1])
        #expect(info.componentQuantization[0].steps == Self.annexKLuma60)
        #expect(info.componentQuantization[1].steps == info.componentQuantization[2].steps)
        #expect(info.componentQuantization[1].steps != Self.annexKLuma60)
    }

    /// A DQT segment with 16-bit steps (Pq = 1), which libjpeg writes for steps over 255.
    @Test func probe_ReadsSixteenBitTables() throws {
        let jpeg = try TestImages.baseline(TestImages.solid(width: 16, height: 16, (1, 2, 3), gray: true), quality: 60)
        var dqt: [UInt8] = [0xFF, 0xDB, 0, 2 + 1 + 128, 0x10]
        for k in 0..<64 { dqt += [UInt8(k >> 8 + 1), UInt8(k & 0xFF)] }  // zig-zag k: 256 + k
        // Replace the file's own DQT (slot 0) by this one: the last definition before the scan wins.
        let segments = TestImages.segments(jpeg)
        #expect(segments.contains { $0.code == 0xDB })
        let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        let patched = Array(jpeg[..<sof]) + dqt + Array(jpeg[sof...])
        let info = try ImageProbe.probe(bytes: patched)
        let steps = info.componentQuantization[0].steps
        for k in 0..<64 { #expect(steps[JPEGHeaderParser.zigzag[k]] == UInt16(256 + k)) }
        #expect(QuantizationTables(aligningTo: info, quality: 80) == nil)  // over 255: not baseline
    }

    /// Malformed DQT segments (precision 2, slot 5, a table cut short): the probe ignores them and
    /// keeps the well-formed tables; libjpeg then refuses the file with a clear error, no crash.
    @Test(arguments: [
        [0x20] + [UInt8](repeating: 9, count: 64),
        [0x05] + [UInt8](repeating: 9, count: 64),
        [0x00] + [UInt8](repeating: 9, count: 30),
    ])
    func probe_IgnoresMalformedTables_AndDecodingRefusesTheFile(table: [UInt8]) throws {
        let jpeg = try TestImages.baseline(TestImages.noise(width: 48, height: 32), quality: 60)
        let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        // The malformed table replaces nothing: slot 0 keeps the file's table, so this DQT comes first.
        let dqtStart = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDB })
        let length = table.count + 2
        let segment: [UInt8] = [0xFF, 0xDB, UInt8(length >> 8), UInt8(length & 0xFF)] + table
        let patched = Array(jpeg[..<dqtStart]) + segment + Array(jpeg[dqtStart...])
        #expect(sof > dqtStart)
        let info = try ImageProbe.probe(bytes: patched)
        #expect(info.componentQuantization.count == 3)
        #expect(info.componentQuantization[0].steps == Self.annexKLuma60)
        #expect(throws: ImageError.self) {
            try ImagePipeline.process(bytes: patched, spec: DerivativeSpec(thumbnailShortEdge: 16, previewLongEdge: 48))
        }
    }

    /// A textured picture, so that both tables have work to do.
    static func texture(width: Int, height: Int) -> PixelBuffer {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        var state: UInt64 = 7
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let grain = Double(Int(state >> 59)) - 16
                let wave = 60 * sin(Double(x) / 9) * cos(Double(y) / 13) + 40 * sin(Double(x + 2 * y) / 5)
                let i = (y * width + x) * 4
                image.bytes[i] = UInt8(clamping: Int(128 + wave + grain))
                image.bytes[i + 1] = UInt8(clamping: Int(110 + wave / 2 - grain))
                image.bytes[i + 2] = UInt8(clamping: Int(140 - wave + grain / 2))
                image.bytes[i + 3] = 255
            }
        }
        return image
    }

    static func meanAbsoluteDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.channels == 4 && b.channels == 4)
        var sum = 0
        for i in 0..<a.bytes.count where i % 4 != 3 { sum += abs(Int(a.bytes[i]) - Int(b.bytes[i])) }
        return Double(sum) / Double(a.width * a.height * 3)
    }

    /// The quality-60 original re-encoded at its own size: with the aligned tables the preview is
    /// closer to the original than a re-encode with our table at the same quality (80 + 2 for a
    /// preview that keeps the size), in fewer bytes;
    /// for a turned original too (the turn keeps whole blocks).
    @Test(arguments: [1, 6])
    func process_KeepsAQualitySixtyOriginal_CloserAndSmaller(orientation: Int) throws {
        let stored = Self.texture(width: 256, height: 192)
        var original = try TestImages.baseline(stored, quality: 60)
        if orientation != 1 {
            original = TestImages.inserting(
                TestImages.exifSegment(orientation: UInt16(orientation), littleEndian: true), into: original)
        }
        let result = try ImagePipeline.process(
            bytes: original, spec: DerivativeSpec(thumbnailShortEdge: 64, previewLongEdge: 256))
        let decoded = ImageOrientation.apply(orientation, to: try TestImages.decode(original))
        let plain = try JPEGEncoder.encode(decoded, quality: 82, iccProfile: nil)

        let alignedError = Self.meanAbsoluteDifference(try TestImages.decode(result.preview.jpeg), decoded)
        let plainError = Self.meanAbsoluteDifference(try TestImages.decode(plain), decoded)
        #expect(alignedError < 0.75 * plainError, "aligned \(alignedError), plain \(plainError)")
        #expect(result.preview.jpeg.count < plain.count)
        #expect(
            try ImageProbe.probe(bytes: result.preview.jpeg).componentQuantization[0].steps[0] == Self.annexKLuma60[0])
    }

    /// Klein's table at a fractional quality: libjpeg's scale at it (45% at 77.5), rounded half up,
    /// every step between the two whole qualities' and the same table for luma and chroma; whole
    /// qualities (and any under 50) are `init(kleinQuality:)`'s, and a quality rounds down to a quarter.
    @Test func klein_AtAFractionalQuality_ScalesBetweenTheWholeOnes() {
        let half = QuantizationTables(kleinQuality: 77.5)
        #expect(Array(half.luma.prefix(8)) == [5, 5, 6, 9, 12, 17, 26, 39])
        #expect(half.chroma == half.luma)
        #expect(half != QuantizationTables(kleinQuality: 77) && half != QuantizationTables(kleinQuality: 78))
        let (q77, q78) = (QuantizationTables(kleinQuality: 77), QuantizationTables(kleinQuality: 78))
        for quality in [77.25, 77.5, 77.75] {
            let tables = QuantizationTables(kleinQuality: quality)
            #expect((0..<64).allSatisfy { q78.luma[$0] <= tables.luma[$0] && tables.luma[$0] <= q77.luma[$0] })
        }
        #expect(Array(QuantizationTables(kleinQuality: 77.75).luma.prefix(8)) == [4, 5, 6, 8, 12, 17, 25, 38])
        #expect(QuantizationTables(kleinQuality: 77.6) == half)
        for whole in [1, 30, 49, 50, 77, 78, 100] {
            #expect(QuantizationTables(kleinQuality: Double(whole)) == QuantizationTables(kleinQuality: whole))
        }
        #expect(QuantizationTables(kleinQuality: 49.5) == QuantizationTables(kleinQuality: 49))
        #expect(QuantizationTables(kleinQuality: 0.5) == QuantizationTables(kleinQuality: 1))
        #expect(QuantizationTables(kleinQuality: 120.0) == QuantizationTables(kleinQuality: 100))
        #expect(QuantizationTables(kleinQuality: 77.5, gray: true).chroma == nil)
    }

    /// Holding the low frequencies takes the first coefficients in zig-zag order (DC, (0,1), (1,0),
    /// then (2,0)…) from the finer tables, luma and chroma, and keeps the others; gray stays gray.
    @Test func holdingLowFrequencies_TakesTheFirstZigZagStepsFromTheFinerTables() {
        let coarse = QuantizationTables(kleinQuality: 76.5)
        let fine = QuantizationTables(kleinQuality: 78)
        let held = coarse.holdingLowFrequencies(3, of: fine)
        for k in 0..<64 {
            let expected = [0, 1, 8].contains(k) ? fine : coarse
            #expect(held.luma[k] == expected.luma[k] && held.chroma![k] == expected.chroma![k])
        }
        #expect(held.luma[0] == 4 && coarse.luma[0] == 5 && held.luma[16] == coarse.luma[16])
        #expect(coarse.holdingLowFrequencies(0, of: fine) == coarse)
        let gray = QuantizationTables(kleinQuality: 76.5, gray: true).holdingLowFrequencies(3, of: fine)
        #expect(gray.chroma == nil && gray.luma[1] == fine.luma[1])
    }

    /// A coarser chroma keeps the luma table and the chroma's first steps in zig-zag order (DC, (0,1),
    /// (1,0), (2,0), (1,1), (0,2)…) and takes the others from the coarser chroma; gray stays gray
    /// (decision 064).
    @Test func coarseningChroma_KeepsLumaAndTheFirstZigZagChromaSteps() {
        let own = QuantizationTables(kleinQuality: 79.5)
        let coarser = QuantizationTables(kleinQuality: 59.5)
        let tables = own.coarseningChroma(to: coarser, keeping: 6)
        #expect(tables.luma == own.luma)
        for k in 0..<64 {
            let expected = [0, 1, 8, 16, 9, 2].contains(k) ? own : coarser
            #expect(tables.chroma![k] == expected.chroma![k])
        }
        #expect(tables.chroma![3] == 15 && own.chroma![3] == 8)  // (0,3): 19 at 81% and at 41%
        #expect(own.coarseningChroma(to: coarser, keeping: 0).chroma == coarser.chroma)
        #expect(own.coarseningChroma(to: coarser, keeping: 64) == own)
        let gray = QuantizationTables(kleinQuality: 79.5, gray: true)
        #expect(gray.coarseningChroma(to: coarser, keeping: 3) == gray)
        #expect(own.coarseningChroma(to: gray, keeping: 3) == own)
    }
}
