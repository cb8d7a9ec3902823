/// Gray originals that reach the pipeline as colour: a gray or gray-and-alpha PNG (expanded to RGBX by
/// the decoder, its alpha flattened onto white), a monochrome HEIC or AVIF, or a colour file of a black
/// and white photo. Their derivatives are one-component JPEGs, as a gray JPEG's are (decision 069).
extension PixelBuffer {
    /// The largest difference between a pixel's red or blue and its green that still counts as gray: a
    /// lossy file's neutral chroma may decode a step or two off, which no one sees.
    static let achromaticTolerance: Int32 = 2

    /// Whether every pixel of this RGBX image has its red and blue within `tolerance` of its green (true for
    /// a gray image). Stops at the first colourful pixel, so a colour photo costs a few rows at most.
    func isAchromatic(tolerance: Int32 = achromaticTolerance) -> Bool {
        if channels == 1 { return true }
        guard channels == 4 else { return false }
        return bytes.withUnsafeBufferPointer { pixels in
            guard let base = pixels.baseAddress else { return true }
            for y in 0..<height {
                let row = base + y * stride
                // One row's worst difference, so the inner loop has no branch and vectorises.
                var worst: Int32 = 0
                for x in 0..<width {
                    let (r, g, b) = (Int32(row[4 &* x]), Int32(row[4 &* x &+ 1]), Int32(row[4 &* x &+ 2]))
                    worst = Swift.max(worst, Swift.max(magnitude(r &- g), magnitude(b &- g)))
                }
                if worst > tolerance { return false }
            }
            return true
        }
    }

    /// This RGBX image as one gray channel, on libjpeg's luma weights (rounded, as its RGB → YCbCr
    /// conversion rounds), so a JPEG of it has the luma a colour one would have; a gray image as it is.
    func grayscale() -> PixelBuffer {
        guard channels == 4 else { return self }
        var gray = [UInt8](repeating: 0, count: width * height)
        bytes.withUnsafeBufferPointer { pixels in
            gray.withUnsafeMutableBufferPointer { out in
                guard let source = pixels.baseAddress, let target = out.baseAddress else { return }
                for index in 0..<(width * height) {
                    let pixel = source + 4 &* index
                    target[index] = Self.luma(red: pixel[0], green: pixel[1], blue: pixel[2])
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: 1, bytes: gray)
    }

    /// libjpeg's luma of one pixel (its fixed-point weights, rounded as its RGB → YCbCr conversion rounds).
    @inline(__always) static func luma(red: UInt8, green: UInt8, blue: UInt8) -> UInt8 {
        let luma = 19_595 &* UInt32(red) &+ 38_470 &* UInt32(green) &+ 7_471 &* UInt32(blue)
        return UInt8(truncatingIfNeeded: (luma &+ 32_768) >> 16)
    }

    /// |d| without `abs`'s overflow trap, so the loop vectorises.
    @inline(__always) private func magnitude(_ d: Int32) -> Int32 {
        let sign = d &>> 31
        return (d ^ sign) &- sign
    }
}
