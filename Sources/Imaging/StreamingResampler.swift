import CResampleKernels

/// Separable Lanczos-3 resampler fed one source row at a time, in order.
///
/// An output row is produced as soon as the last source row it needs has arrived, from a ring of
/// `vertical.taps` rows, so memory is a few rows whatever the image size. The ring holds either
/// horizontally resampled rows (horizontal pass first) or the source rows themselves (vertical
/// pass first), whichever order costs fewer multiply-adds: shrinking a lot vertically (the
/// thumbnail from the preview) is cheaper vertical-first, since the horizontal pass then runs on
/// output rows only. Rows are `Float`, 1 (gray) or 4 (RGBX) per pixel; a vertical-first ring may
/// hold the 8-bit source rows themselves (`byteRows`), widened as the vertical pass reads them.
/// The inner loops are C (`CResampleKernels`): AVX2 and FMA where the CPU has them. A
/// horizontal-first resampler to the source's own size (`isIdentity`) keeps no ring and runs no
/// pass: each row is rounded and handed on as it arrives (decision 065), the bytes the one-tap
/// passes of weight 1 would give.
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
    /// True when the output is the source's own size and the passes are horizontal first: rows
    /// go straight to the output, with no ring and no pass over them.
    let isIdentity: Bool

    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    private let ringFloats: Int  // floats per ring row
    private let targetFloats: Int  // floats per output row
    private let ring: UnsafeMutablePointer<Float>
    private let rowPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Vertical-first with `byteRows`: the ring of 8-bit source rows (then `ring` is unused).
    private let byteRing: UnsafeMutablePointer<UInt8>?
    private let byteRowPointers: UnsafeMutablePointer<UnsafePointer<UInt8>?>
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
    /// forces the pass order (tests), otherwise the cheaper one is chosen. With `byteRows`, a
    /// vertical-first resampler keeps its source rows as bytes (`nextByteRowSlot`): a quarter of
    /// the float ring's memory traffic and no widening copy.
    init(
        sourceWidth: Int, sourceHeight: Int, targetWidth: Int, targetHeight: Int, channels: Int,
        downstream: StreamingResampler? = nil, sink: ((UnsafeMutablePointer<UInt8>) -> Void)? = nil,
        orientation: Int = 1, verticalFirst forcedOrder: Bool? = nil, byteRows: Bool = false
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
        let keepsBytes = verticalFirst && byteRows
        isIdentity = !verticalFirst && sourceWidth == targetWidth && sourceHeight == targetHeight
        ring = Self.allocateFloats(keepsBytes || isIdentity ? 1 : vertical.taps * ringFloats)
        byteRing = keepsBytes ? .allocate(capacity: vertical.taps * ringFloats) : nil
        byteRowPointers = .allocate(capacity: vertical.taps)
        combined = Self.allocateFloats(verticalFirst ? sourceWidth * channels : 1)
        scratch = Self.allocateFloats(targetFloats)
        rowPointers = .allocate(capacity: vertical.taps)
        sinkRow = sink == nil && orientation == 1 ? nil : .allocate(capacity: max(targetFloats, 1))
        output = sink == nil ? [UInt8](repeating: 0, count: targetWidth * targetHeight * channels) : []
    }

    deinit {
        UnsafeMutableRawPointer(ring).deallocate()
        byteRing?.deallocate()
        byteRowPointers.deallocate()
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

    /// Bytes of source (or horizontally resampled) rows held between pushes: none for an identity.
    var ringBytes: Int {
        if isIdentity { return 0 }
        return vertical.taps * ringFloats * (byteRing == nil ? MemoryLayout<Float>.stride : 1)
    }

    /// Adds the next source row: `sourceWidth * channels` floats.
    func push(row: UnsafePointer<Float>) {
        precondition(rowsReceived < sourceHeight && byteRing == nil)
        if isIdentity { return passThrough(row) }
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
        guard verticalFirst, byteRing == nil, rowsReceived < sourceHeight else { return nil }
        return ring + (rowsReceived % vertical.taps) * ringFloats
    }

    /// Where the next 8-bit source row goes (`sourceWidth * channels` bytes) in a resampler that
    /// keeps bytes (vertical-first, `byteRows`); then `commitRow()`. Nil otherwise.
    var nextByteRowSlot: UnsafeMutablePointer<UInt8>? {
        guard let byteRing, rowsReceived < sourceHeight else { return nil }
        return byteRing + (rowsReceived % vertical.taps) * ringFloats
    }

    /// Takes the row written at `nextRowSlot` or `nextByteRowSlot` as the next source row.
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
        if isIdentity { return target.update(from: row, count: targetFloats) }
        resampleHorizontally(row, into: target)
    }

    /// Adds the next source row, already through `resampleHorizontally(row:into:)`.
    func push(horizontallyResampled row: UnsafePointer<Float>) {
        precondition(!verticalFirst && rowsReceived < sourceHeight)
        if isIdentity { return passThrough(row) }
        (ring + (rowsReceived % vertical.taps) * ringFloats).update(from: row, count: ringFloats)
        rowsReceived += 1
        emitReadyRows()
    }

    /// An identity's row: output row `rowsReceived` is the source row itself.
    private func passThrough(_ row: UnsafePointer<Float>) {
        rowsReceived += 1
        deliver(row, y: nextOutputRow)
        nextOutputRow += 1
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
            let offset = ((start + k) % taps) * ringFloats
            if let byteRing {
                byteRowPointers[k] = UnsafePointer(byteRing + offset)
            } else {
                rowPointers[k] = UnsafePointer(ring + offset)
            }
        }
        let sum = verticalFirst ? combined : scratch
        vertical.weights.withUnsafeBufferPointer { weights in
            let w = weights.baseAddress! + y * taps
            if byteRing != nil {
                gd_combine_u8(byteRowPointers, w, Int32(taps), ringFloats, sum, Self.avx2)
            } else {
                gd_combine_f32(rowPointers, w, Int32(taps), verticalFirst ? ringFloats : targetFloats, sum, Self.avx2)
            }
        }
        if verticalFirst { resampleHorizontally(combined, into: scratch) }
        deliver(scratch, y: y)
    }

    /// Rounds output row `y` (`targetFloats` floats) into the sink or the image and hands the
    /// unrounded floats downstream.
    private func deliver(_ floats: UnsafePointer<Float>, y: Int) {
        if let sink, let sinkRow {
            Self.quantize(floats, count: targetFloats, into: sinkRow)
            sink(sinkRow)
        } else if orientation == 1 {
            output.withUnsafeMutableBufferPointer { out in
                Self.quantize(floats, count: targetFloats, into: out.baseAddress! + y * targetFloats)
            }
        } else if let row = sinkRow {
            Self.quantize(floats, count: targetFloats, into: row)
            store(row, y: y)
        }
        downstream?.push(row: floats)
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
        horizontal.weights.withUnsafeBufferPointer { weights in
            horizontal.starts.withUnsafeBufferPointer { starts in
                let (w, s, taps) = (weights.baseAddress!, starts.baseAddress!, Int32(horizontal.taps))
                if channels == 4 {
                    gd_resample_row4(source, s, w, taps, targetWidth, target, Self.avx2)
                } else {
                    gd_resample_row1(source, s, w, taps, targetWidth, target, Self.avx2)
                }
            }
        }
    }

    /// Whether the C kernels may use AVX2 and FMA: read once, from CPUID.
    static let avx2 = gd_resample_has_avx2()

    /// Rounds (to nearest, ties to even) and clamps floats to bytes.
    static func quantize(_ source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<UInt8>) {
        gd_quantize(source, count, target, avx2)
    }
}
