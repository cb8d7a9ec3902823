/// Separable Lanczos-3 resampler fed one source row at a time, in order.
///
/// An output row is produced as soon as the last source row it needs has arrived, from a ring of
/// `vertical.taps` rows, so memory is a few rows whatever the image size. The ring holds either
/// horizontally resampled rows (horizontal pass first) or the source rows themselves (vertical
/// pass first), whichever order costs fewer multiply-adds: shrinking a lot vertically (the
/// thumbnail from the preview) is cheaper vertical-first, since the horizontal pass then runs on
/// output rows only. Rows are `Float`, 1 (gray) or 4 (RGBX) per pixel.
final class StreamingResampler {
    /// Source size in pixels.
    let sourceWidth: Int
    /// Source height in pixels (rows to push).
    let sourceHeight: Int
    /// Output width, before orientation.
    let targetWidth: Int
    /// Output height, before orientation.
    let targetHeight: Int
    /// Floats per pixel: 1 or 4.
    let channels: Int
    /// True when rows are combined vertically before the horizontal pass.
    let verticalFirst: Bool

    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    private let ringFloats: Int  // floats per ring row
    private let targetFloats: Int  // floats per output row
    private let ring: UnsafeMutablePointer<Float>
    private let rowPointers: UnsafeMutablePointer<UnsafePointer<Float>>
    private let combined: UnsafeMutablePointer<Float>  // vertical-first: one combined source row
    private let scratch: UnsafeMutablePointer<Float>  // one output row before rounding
    private var rowsReceived = 0
    private var nextOutputRow = 0
    private var output: [UInt8]
    /// Receives each output row, unrounded, as it is produced: the thumbnail is resampled from
    /// the preview's rows while they stream by, without a second pass over the image.
    let downstream: StreamingResampler?
    /// When set, receives each output row as bytes instead of keeping the image (a streaming
    /// encoder); the row may be modified in place.
    private let sink: ((UnsafeMutablePointer<UInt8>) -> Void)?
    private let sinkRow: UnsafeMutablePointer<UInt8>?
    /// EXIF orientation applied while storing rows (buffered output only): `finish()` returns
    /// the image as displayed, with no separate turning pass or second buffer.
    let orientation: Int

    /// A resampler from `sourceWidth`×`sourceHeight` to `targetWidth`×`targetHeight` (stored
    /// orientation), feeding `downstream` and/or `sink` with each output row; `verticalFirst`
    /// forces the pass order (tests), otherwise the cheaper one is chosen.
    init(
        sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, channels: Int,
        downstream: StreamingResampler? = nil, sink: ((UnsafeMutablePointer<UInt8>) -> Void)? = nil,
        orientation: Int = 1, verticalFirst forcedOrder: Bool? = nil
    ) {
        precondition(channels == 1 || channels == 4)
        precondition(downstream.map { $0.sourceWidth == targetWidth && $0.sourceHeight == targetHeight } ?? true)
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.targetWidth = targetWidth
        self.targetHeight = targetHeight
        self.channels = channels
        self.downstream = downstream
        self.sink = sink
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        horizontal = ResampleWeights(sourceSize: sourceWidth, targetSize: targetWidth)
        vertical = ResampleWeights(sourceSize: sourceHeight, targetSize: targetHeight)
        // Multiply-adds per image, in pixels × taps (the vertical pass does two pixels per SIMD8).
        let horizontalFirstCost =
            sourceHeight * targetWidth * horizontal.taps + targetHeight * targetWidth * vertical.taps / 2
        let verticalFirstCost =
            targetHeight * sourceWidth * vertical.taps / 2 + targetHeight * targetWidth * horizontal.taps
        verticalFirst = forcedOrder ?? (verticalFirstCost < horizontalFirstCost)
        targetFloats = targetWidth * channels
        ringFloats = (verticalFirst ? sourceWidth : targetWidth) * channels
        ring = Self.allocateFloats(vertical.taps * ringFloats)
        combined = Self.allocateFloats(verticalFirst ? sourceWidth * channels : 1)
        scratch = Self.allocateFloats(targetFloats)
        rowPointers = .allocate(capacity: vertical.taps)
        sinkRow = sink == nil && orientation == 1 ? nil : .allocate(capacity: max(targetFloats, 1))
        output = sink == nil ? [UInt8](repeating: 0, count: targetWidth * targetHeight * channels) : []
    }

    deinit {
        UnsafeMutableRawPointer(ring).deallocate()
        UnsafeMutableRawPointer(combined).deallocate()
        UnsafeMutableRawPointer(scratch).deallocate()
        rowPointers.deallocate()
        sinkRow?.deallocate()
    }

    private static func allocateFloats(_ count: Int) -> UnsafeMutablePointer<Float> {
        UnsafeMutableRawPointer.allocate(byteCount: max(count, 16) * MemoryLayout<Float>.stride, alignment: 64)
            .bindMemory(to: Float.self, capacity: max(count, 16))
    }

    /// True once every output row has been produced.
    var isComplete: Bool { nextOutputRow == targetHeight }

    /// Adds the next source row: `sourceWidth * channels` floats.
    func push(row: UnsafePointer<Float>) {
        precondition(rowsReceived < sourceHeight)
        let slot = ring + (rowsReceived % vertical.taps) * ringFloats
        if verticalFirst {
            slot.update(from: row, count: ringFloats)
        } else {
            resampleHorizontally(row, into: slot)
        }
        rowsReceived += 1
        emitReadyRows()
    }

    /// Where the next source row goes in a vertical-first resampler, whose ring holds source rows:
    /// a caller that writes the row there (`sourceWidth * channels` floats) and then calls
    /// `commitRow()` saves `push(row:)`'s copy of it. Nil in a horizontal-first resampler.
    var nextRowSlot: UnsafeMutablePointer<Float>? {
        guard verticalFirst, rowsReceived < sourceHeight else { return nil }
        return ring + (rowsReceived % vertical.taps) * ringFloats
    }

    /// Takes the row written at `nextRowSlot` as the next source row.
    func commitRow() {
        precondition(verticalFirst && rowsReceived < sourceHeight)
        rowsReceived += 1
        emitReadyRows()
    }

    /// Floats in a horizontally resampled row (`targetWidth * channels`).
    var horizontalRowFloats: Int { targetFloats }

    /// The horizontal pass alone, for a caller on another thread (horizontal-first resamplers
    /// only): it reads nothing but the immutable weights, so it may run while this resampler
    /// emits rows elsewhere. Hand the result to `push(horizontallyResampled:)` in row order.
    func resampleHorizontally(row: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        precondition(!verticalFirst)
        resampleHorizontally(row, into: target)
    }

    /// Adds the next source row, already through `resampleHorizontally(row:into:)`.
    func push(horizontallyResampled row: UnsafePointer<Float>) {
        precondition(!verticalFirst && rowsReceived < sourceHeight)
        (ring + (rowsReceived % vertical.taps) * ringFloats).update(from: row, count: ringFloats)
        rowsReceived += 1
        emitReadyRows()
    }

    /// Emits every output row whose source rows have all arrived.
    private func emitReadyRows() {
        while nextOutputRow < targetHeight && vertical.starts[nextOutputRow] + vertical.taps <= rowsReceived {
            emitRow(nextOutputRow)
            nextOutputRow += 1
        }
    }

    /// The resampled image, as displayed; call after the last source row (not with a sink).
    func finish() -> PixelBuffer {
        precondition(isComplete, "resampler fed \(rowsReceived) of \(sourceHeight) rows")
        precondition(sink == nil, "a streaming resampler keeps no image")
        let swaps = orientation >= 5
        return PixelBuffer(
            width: swaps ? targetHeight : targetWidth, height: swaps ? targetWidth : targetHeight,
            channels: channels, bytes: output)
    }

    /// Output row `y`: the vertical and horizontal passes in the chosen order, then rounding.
    private func emitRow(_ y: Int) {
        let taps = vertical.taps
        let start = vertical.starts[y]
        for k in 0..<taps {
            rowPointers[k] = UnsafePointer(ring + ((start + k) % taps) * ringFloats)
        }
        vertical.weights.withUnsafeBufferPointer { weights in
            let w = weights.baseAddress! + y * taps
            if verticalFirst {
                Self.combine(rowPointers, weights: w, taps: taps, count: ringFloats, into: combined)
                resampleHorizontally(combined, into: scratch)
            } else {
                Self.combine(rowPointers, weights: w, taps: taps, count: targetFloats, into: scratch)
            }
        }
        if let sink, let sinkRow {
            Self.quantize(scratch, count: targetFloats, into: sinkRow)
            sink(sinkRow)
        } else if orientation == 1 {
            output.withUnsafeMutableBufferPointer { out in
                Self.quantize(scratch, count: targetFloats, into: out.baseAddress! + y * targetFloats)
            }
        } else if let row = sinkRow {
            Self.quantize(scratch, count: targetFloats, into: row)
            store(row, y: y)
        }
        downstream?.push(row: scratch)
    }

    /// Writes stored row `y` to its displayed place.
    private func store(_ row: UnsafeMutablePointer<UInt8>, y: Int) {
        let (width, height, channels, orientation) = (targetWidth, targetHeight, channels, orientation)
        output.withUnsafeMutableBytes { image in
            ImageOrientation.place(
                row: row, y: y, width: width, height: height, channels: channels, orientation: orientation,
                into: image)
        }
    }

    private func resampleHorizontally(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        if channels == 4 {
            resampleRow4(source, into: target)
        } else {
            resampleRow1(source, into: target)
        }
    }

    private func resampleRow4(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        let taps = horizontal.taps
        UnsafeRawPointer(source).withMemoryRebound(to: SIMD4<Float>.self, capacity: sourceWidth) { src in
            UnsafeMutableRawPointer(target).withMemoryRebound(to: SIMD4<Float>.self, capacity: targetWidth) { dst in
                horizontal.weights.withUnsafeBufferPointer { weights in
                    horizontal.starts.withUnsafeBufferPointer { starts in
                        var w = weights.baseAddress!
                        for i in 0..<targetWidth {
                            let s = src + starts[i]
                            // Four independent sums: a single one would wait on every add's latency.
                            var a0 = SIMD4<Float>()
                            var a1 = SIMD4<Float>()
                            var a2 = SIMD4<Float>()
                            var a3 = SIMD4<Float>()
                            var k = 0
                            while k + 4 <= taps {
                                a0 += w[k] * s[k]
                                a1 += w[k + 1] * s[k + 1]
                                a2 += w[k + 2] * s[k + 2]
                                a3 += w[k + 3] * s[k + 3]
                                k += 4
                            }
                            while k < taps {
                                a0 += w[k] * s[k]
                                k += 1
                            }
                            dst[i] = (a0 + a1) + (a2 + a3)
                            w += taps
                        }
                    }
                }
            }
        }
    }

    private func resampleRow1(_ source: UnsafePointer<Float>, into target: UnsafeMutablePointer<Float>) {
        let taps = horizontal.taps
        horizontal.weights.withUnsafeBufferPointer { weights in
            horizontal.starts.withUnsafeBufferPointer { starts in
                var w = weights.baseAddress!
                for i in 0..<targetWidth {
                    let s = source + starts[i]
                    var acc: Float = 0
                    for k in 0..<taps { acc += w[k] * s[k] }
                    target[i] = acc
                    w += taps
                }
            }
        }
    }

    /// `out[x] = Σₖ weights[k] · rows[k][x]` for `count` floats: 32 at a time in four independent
    /// SIMD8 sums, to keep the adders busy.
    private static func combine(
        _ rows: UnsafePointer<UnsafePointer<Float>>, weights w: UnsafePointer<Float>, taps: Int, count n: Int,
        into sum: UnsafeMutablePointer<Float>
    ) {
        var x = 0
        while x + 32 <= n {
            var a0 = SIMD8<Float>()
            var a1 = SIMD8<Float>()
            var a2 = SIMD8<Float>()
            var a3 = SIMD8<Float>()
            for k in 0..<taps {
                let weight = w[k]
                let row = UnsafeRawPointer(rows[k] + x)
                a0 += weight * row.loadUnaligned(as: SIMD8<Float>.self)
                a1 += weight * row.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
                a2 += weight * row.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self)
                a3 += weight * row.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self)
            }
            let out = UnsafeMutableRawPointer(sum + x)
            out.storeBytes(of: a0, as: SIMD8<Float>.self)
            out.storeBytes(of: a1, toByteOffset: 32, as: SIMD8<Float>.self)
            out.storeBytes(of: a2, toByteOffset: 64, as: SIMD8<Float>.self)
            out.storeBytes(of: a3, toByteOffset: 96, as: SIMD8<Float>.self)
            x += 32
        }
        while x + 8 <= n {
            var acc = SIMD8<Float>()
            for k in 0..<taps {
                acc += w[k] * UnsafeRawPointer(rows[k] + x).loadUnaligned(as: SIMD8<Float>.self)
            }
            UnsafeMutableRawPointer(sum + x).storeBytes(of: acc, as: SIMD8<Float>.self)
            x += 8
        }
        while x < n {
            var acc: Float = 0
            for k in 0..<taps { acc += w[k] * rows[k][x] }
            sum[x] = acc
            x += 1
        }
    }

    /// Rounds and clamps floats to bytes. Adding 1.5·2²³ puts round-to-nearest(v) in the low
    /// mantissa bits, a branch-free form the compiler vectorizes.
    static func quantize(_ source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<UInt8>) {
        for i in 0..<count {
            let clamped = min(max(source[i], 0), 255)
            target[i] = UInt8(truncatingIfNeeded: (clamped + 12_582_912).bitPattern)
        }
    }
}
