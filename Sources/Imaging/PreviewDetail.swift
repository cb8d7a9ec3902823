/// How much fine detail an image has: the mean absolute difference between neighbouring luma
/// samples, across and down, averaged (0 for a flat image, 255 at most), measured on one pair of
/// rows in every `rowPairStep` rows: across on the pair's first row, down between its two.
///
/// It is what tells china's preview from the others in decision 060: a photo full of small
/// detail (china 14.2–14.4, path 11.0) against at most 3.5 for the other previews of the bench's
/// 18 photos that keep the original's size. Those reach vips' score with Klein's table two
/// qualities below the quality in force; china needs the quality in force
/// (docs/decisions/060-klein-tables-for-original-size-previews.md). Sampling a quarter of the
/// rows moves those figures by at most 0.1 and costs a quarter of the instructions.
enum PreviewDetail {
    /// One pair of rows is measured in every so many rows.
    static let rowPairStep = 4

    /// The mean absolute luma gradient of `image` (RGBX or gray), on libjpeg's luma weights.
    static func meanGradient(_ image: PixelBuffer) -> Double {
        let (width, height, channels) = (image.width, image.height, image.channels)
        guard width > 0, height > 0 else { return 0 }
        // Luma times 256 (77 + 150 + 29 = 256) of the pair's two rows.
        let first = UnsafeMutablePointer<Int32>.allocate(capacity: width)
        let second = UnsafeMutablePointer<Int32>.allocate(capacity: width)
        defer {
            first.deallocate()
            second.deallocate()
        }
        var across: Int64 = 0
        var down: Int64 = 0
        var pairs = 0
        image.bytes.withUnsafeBufferPointer { pixels in
            func luma(row y: Int, into luma: UnsafeMutablePointer<Int32>) {
                let row = pixels.baseAddress! + y * width * channels
                if channels == 1 {
                    for x in 0..<width { luma[x] = Int32(row[x]) &<< 8 }
                } else {
                    // RGBX at a constant stride, which the compiler vectorises.
                    for x in 0..<width {
                        luma[x] =
                            77 &* Int32(row[4 &* x]) &+ 150 &* Int32(row[4 &* x &+ 1]) &+ 29 &* Int32(row[4 &* x &+ 2])
                    }
                }
            }
            // A one-row image is measured across only.
            for y in stride(from: 0, to: max(height - 1, 1), by: rowPairStep) {
                luma(row: y, into: first)
                // A row's sum fits in 32 bits up to 32,896 pixels wide (65,280 a step at most).
                var sum: Int32 = 0
                for x in 1..<width { sum &+= magnitude(first[x] &- first[x &- 1]) }
                across &+= Int64(sum)
                if y + 1 < height {
                    luma(row: y + 1, into: second)
                    sum = 0
                    for x in 0..<width { sum &+= magnitude(second[x] &- first[x]) }
                    down &+= Int64(sum)
                }
                pairs += 1
            }
        }
        let acrossMean = width > 1 ? Double(across) / Double((width - 1) * pairs) : 0
        let downMean = height > 1 ? Double(down) / Double(width * pairs) : 0
        return (acrossMean + downMean) / 2 / 256
    }

    /// The mean chroma of `image` (RGBX; 0 for gray): |Cb| + |Cr| on libjpeg's weights, in 8-bit steps,
    /// on one row in every `rowPairStep` (the first of each pair `meanGradient` reads).
    ///
    /// It tells a colourful flat preview, whose margin over vips' score is in its chroma (the coarse chroma
    /// table keeps its lowest steps; vips' Q80 table does not), from a gray or pale one: a WebP's preview whose
    /// thumbnail is near-size goes one Klein step further from 34 (flower 44.6; decision 064, session 20).
    static func meanChroma(_ image: PixelBuffer) -> Double {
        let (width, height) = (image.width, image.height)
        guard width > 0, height > 0, image.channels == 4 else { return 0 }
        var total: Int64 = 0
        var rows = 0
        image.bytes.withUnsafeBufferPointer { pixels in
            for y in stride(from: 0, to: max(height - 1, 1), by: rowPairStep) {
                let row = pixels.baseAddress! + y * width * 4
                // 256 × |Cb| + |Cr| (−43, −85, 128 and 128, −107, −21: each sums to 0, so gray is 0) is at
                // most 65,280 a pixel, so 32-bit sums over 32,768 pixels at a time.
                var x = 0
                while x < width {
                    let end = min(x + 32_768, width)
                    var sum: Int32 = 0
                    for i in x..<end {
                        let (r, g, b) = (Int32(row[4 &* i]), Int32(row[4 &* i &+ 1]), Int32(row[4 &* i &+ 2]))
                        sum &+= magnitude(128 &* b &- 43 &* r &- 85 &* g) &+ magnitude(128 &* r &- 107 &* g &- 21 &* b)
                    }
                    total += Int64(sum)
                    x = end
                }
                rows += 1
            }
        }
        return Double(total) / Double(width * rows) / 256
    }

    /// |d| without `abs`'s overflow trap (d is at most 65,280 either way), so the loops vectorise.
    @inline(__always) private static func magnitude(_ d: Int32) -> Int32 {
        let sign = d &>> 31
        return (d ^ sign) &- sign
    }
}
