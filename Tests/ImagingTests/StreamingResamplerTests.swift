import Dispatch
import Testing

@testable import Imaging

@Suite struct StreamingResamplerTests {
    static func run(_ image: PixelBuffer, width: Int, height: Int, verticalFirst: Bool?) -> PixelBuffer {
        let resampler = StreamingResampler(
            sourceWidth: image.width, sourceHeight: image.height, targetWidth: width, targetHeight: height,
            channels: image.channels, verticalFirst: verticalFirst)
        let count = image.width * image.channels
        var row = [Float](repeating: 0, count: count)
        for y in 0..<image.height {
            for i in 0..<count { row[i] = Float(image.bytes[y * count + i]) }
            row.withUnsafeBufferPointer { resampler.push(row: $0.baseAddress!) }
        }
        return resampler.finish()
    }

    @Test(arguments: [(300, 200, 97, 61), (64, 640, 60, 100), (33, 33, 33, 11), (1, 500, 1, 17), (500, 1, 17, 1)])
    func resampler_GivesSameResult_InEitherPassOrder(width: Int, height: Int, targetWidth: Int, targetHeight: Int) {
        let image = TestImages.noise(width: width, height: height)
        let a = Self.run(image, width: targetWidth, height: targetHeight, verticalFirst: false)
        let b = Self.run(image, width: targetWidth, height: targetHeight, verticalFirst: true)
        #expect(a.width == targetWidth && a.height == targetHeight)
        let worst = zip(a.bytes, b.bytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= 1)
    }

    /// A resampler to the source's own size holds no rows and runs no pass: each row comes out
    /// rounded as it arrives, and its downstream resampler gets exactly what it would get from the
    /// rows themselves (decision 065).
    @Test(arguments: [(96, 64, 32, 21), (1, 40, 1, 13)])
    func resampler_ToItsOwnSize_HoldsNoRowsAndHandsTheRowsOn(
        width: Int, height: Int, thumbnailWidth: Int, thumbnailHeight: Int
    ) {
        let image = TestImages.noise(width: width, height: height)
        let thumbnail = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: thumbnailWidth, targetHeight: thumbnailHeight,
            channels: image.channels)
        let identity = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: width, targetHeight: height,
            channels: image.channels, downstream: thumbnail, verticalFirst: false)
        #expect(identity.isIdentity && identity.ringBytes == 0)
        // Half-integer floats: what comes out is rounded (ties to even), what goes downstream is not.
        let count = width * image.channels
        var row = [Float](repeating: 0, count: count)
        for y in 0..<height {
            for i in 0..<count { row[i] = Float(image.bytes[y * count + i]) + 0.5 }
            row.withUnsafeBufferPointer { identity.push(row: $0.baseAddress!) }
        }
        let rounded = image.bytes.map { UInt8(min(255, (Int($0) + 1) & ~1)) }
        #expect(identity.finish().bytes == rounded)
        let direct = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: thumbnailWidth, targetHeight: thumbnailHeight,
            channels: image.channels)
        for y in 0..<height {
            for i in 0..<count { row[i] = Float(image.bytes[y * count + i]) + 0.5 }
            row.withUnsafeBufferPointer { direct.push(row: $0.baseAddress!) }
        }
        #expect(thumbnail.finish().bytes == direct.finish().bytes)
        // Any other size keeps its ring.
        let shrinking = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: width, targetHeight: thumbnailHeight,
            channels: image.channels, verticalFirst: false)
        #expect(!shrinking.isIdentity && shrinking.ringBytes > 0)
    }

    /// The pipeline's split: the horizontal pass on one thread (`resampleHorizontally(row:into:)`),
    /// the rest on another (`push(horizontallyResampled:)`), gives exactly the one-thread result.
    @Test(arguments: [(300, 200, 97, 61), (640, 400, 512, 320), (1, 500, 1, 17)])
    func resampler_GivesSameBytes_WhenHorizontalPassRunsOnAnotherThread(
        width: Int, height: Int, targetWidth: Int, targetHeight: Int
    ) {
        let image = TestImages.noise(width: width, height: height)
        let whole = Self.run(image, width: targetWidth, height: targetHeight, verticalFirst: false)
        let resampler = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: targetWidth, targetHeight: targetHeight,
            channels: image.channels, verticalFirst: false)
        let count = width * image.channels
        let floats = resampler.horizontalRowFloats
        let prepared = UnsafeMutableBufferPointer<Float>.allocate(capacity: height * floats)
        defer { prepared.deallocate() }
        // Unchecked: the horizontal pass only reads the resampler's weights; each row has its own slice.
        nonisolated(unsafe) let horizontal = resampler
        nonisolated(unsafe) let output = prepared
        DispatchQueue.concurrentPerform(iterations: 2) { part in  // rows split between two threads
            var row = [Float](repeating: 0, count: count)
            for y in stride(from: part, to: height, by: 2) {
                for i in 0..<count { row[i] = Float(image.bytes[y * count + i]) }
                row.withUnsafeBufferPointer {
                    horizontal.resampleHorizontally(row: $0.baseAddress!, into: output.baseAddress! + y * floats)
                }
            }
        }
        for y in 0..<height { resampler.push(horizontallyResampled: prepared.baseAddress! + y * floats) }
        #expect(resampler.finish().bytes == whole.bytes)
    }

    /// Rows written in place (`nextRowSlot`, `commitRow()`) give exactly `push(row:)`'s bytes; a
    /// horizontal-first resampler, whose ring holds resampled rows, offers no slot.
    @Test(arguments: [(300, 200, 97, 61), (640, 400, 200, 125), (1, 500, 1, 17)])
    func resampler_GivesSameBytes_WhenRowsAreWrittenInPlace(
        width: Int, height: Int, targetWidth: Int, targetHeight: Int
    ) throws {
        let image = TestImages.noise(width: width, height: height)
        let pushed = Self.run(image, width: targetWidth, height: targetHeight, verticalFirst: true)
        let resampler = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: targetWidth, targetHeight: targetHeight,
            channels: image.channels, verticalFirst: true)
        let count = width * image.channels
        for y in 0..<height {
            let slot = try #require(resampler.nextRowSlot)
            for i in 0..<count { slot[i] = Float(image.bytes[y * count + i]) }
            resampler.commitRow()
        }
        #expect(resampler.nextRowSlot == nil)
        #expect(resampler.finish().bytes == pushed.bytes)
        let horizontalFirst = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: targetWidth, targetHeight: targetHeight,
            channels: image.channels, verticalFirst: false)
        #expect(horizontalFirst.nextRowSlot == nil)
    }

    /// A resampler that keeps its source rows as bytes (`byteRows`, `nextByteRowSlot`) gives exactly
    /// the bytes of one fed floats; only a vertical-first one keeps bytes.
    @Test(arguments: [(300, 200, 97, 61, 4), (640, 400, 200, 125, 4), (301, 77, 50, 20, 1), (1, 500, 1, 17, 4)])
    func resampler_GivesSameBytes_WhenItKeepsByteRows(
        width: Int, height: Int, targetWidth: Int, targetHeight: Int, channels: Int
    ) throws {
        let noise = TestImages.noise(width: width, height: height)
        let image =
            channels == 4
            ? noise
            : PixelBuffer(width: width, height: height, channels: 1, bytes: Array(noise.bytes[..<(width * height)]))
        let pushed = Self.run(image, width: targetWidth, height: targetHeight, verticalFirst: true)
        let resampler = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: targetWidth, targetHeight: targetHeight,
            channels: channels, verticalFirst: true, byteRows: true)
        #expect(resampler.nextRowSlot == nil)
        let count = width * channels
        for y in 0..<height {
            let slot = try #require(resampler.nextByteRowSlot)
            for i in 0..<count { slot[i] = image.bytes[y * count + i] }
            resampler.commitRow()
        }
        #expect(resampler.nextByteRowSlot == nil)
        #expect(resampler.finish().bytes == pushed.bytes)
        let horizontalFirst = StreamingResampler(
            sourceWidth: width, sourceHeight: height, targetWidth: targetWidth, targetHeight: targetHeight,
            channels: channels, verticalFirst: false, byteRows: true)
        #expect(horizontalFirst.nextByteRowSlot == nil)
    }

    @Test func resampler_KeepsFlatColour_AndHandlesGray() {
        let flat = TestImages.solid(width: 123, height: 77, (10, 128, 250))
        let small = Self.run(flat, width: 40, height: 25, verticalFirst: nil)
        #expect(small.bytes.enumerated().allSatisfy { $0.offset % 4 == 3 || [10, 128, 250].contains($0.element) })
        let gray = TestImages.solid(width: 90, height: 30, (77, 77, 77), gray: true)
        #expect(Self.run(gray, width: 31, height: 9, verticalFirst: nil).bytes.allSatisfy { $0 == 77 })
    }

    @Test func resampler_AveragesFineDetail_WhenShrinking() {
        // A one-pixel black/white checkerboard shrunk 4× becomes mid-grey (anti-aliasing works).
        var bytes = [UInt8](repeating: 0, count: 64 * 64)
        for y in 0..<64 { for x in 0..<64 where (x + y) % 2 == 0 { bytes[y * 64 + x] = 255 } }
        let checker = PixelBuffer(width: 64, height: 64, channels: 1, bytes: bytes)
        let small = Self.run(checker, width: 16, height: 16, verticalFirst: nil)
        #expect(small.bytes.allSatisfy { abs(Int($0) - 128) <= 3 })
    }

    @Test func weights_SumToOne_AndStayInsideTheImage() {
        for (source, target) in [(100, 7), (7, 7), (5, 3), (8000, 1), (3, 1), (1000, 999)] {
            let weights = ResampleWeights(sourceSize: source, targetSize: target)
            for i in 0..<target {
                let sum = (0..<weights.taps).reduce(Float(0)) { $0 + weights.weights[i * weights.taps + $1] }
                #expect(abs(sum - 1) < 1e-4)
                #expect(weights.starts[i] >= 0 && weights.starts[i] + weights.taps <= source)
            }
        }
    }
}
