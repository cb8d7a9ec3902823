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

    /// |d| without `abs`'s overflow trap (d is at most 65,280 either way), so the loops vectorise.
    @inline(__always) private static func magnitude(_ d: Int32) -> Int32 {
        let sign = d &>> 31
        return (d ^ sign) &- sign
    }
}
