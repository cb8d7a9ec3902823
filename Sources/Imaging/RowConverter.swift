import CResampleKernels

/// Turns decoded 8-bit rows into the float rows the resampler reads: RGBX and gray are widened;
/// CMYK (and YCCK, which libjpeg hands out as CMYK) becomes RGB with the naive formula
/// R = (1 − C)(1 − K), inverted first for Adobe files, which store CMYK inverted.
struct RowConverter {
    /// Layout of the decoded rows.
    let format: JPEGDecoder.OutputFormat
    /// True when CMYK samples are stored inverted (an Adobe APP14 marker is present).
    let invertedCMYK: Bool

    /// Floats per pixel written: 1 for gray, 4 otherwise.
    var channels: Int { format == .gray ? 1 : 4 }

    /// Converts `width` pixels.
    func convert(_ source: UnsafePointer<UInt8>, width: Int, into target: UnsafeMutablePointer<Float>) {
        switch format {
        case .gray:
            Self.widen(source, count: width, into: target)
        case .rgbx:
            Self.widen(source, count: width * 4, into: target)
        case .cmyk:
            let scale: Float = 1 / 255
            for i in 0..<width {
                var c = Float(Int32(source[4 * i]))
                var m = Float(Int32(source[4 * i + 1]))
                var y = Float(Int32(source[4 * i + 2]))
                var k = Float(Int32(source[4 * i + 3]))
                if !invertedCMYK {
                    c = 255 - c
                    m = 255 - m
                    y = 255 - y
                    k = 255 - k
                }
                // Inverted values: c = 255·(1 − C), so R = 255·(1 − C)(1 − K) = c·k/255.
                target[4 * i] = c * k * scale
                target[4 * i + 1] = m * k * scale
                target[4 * i + 2] = y * k * scale
                target[4 * i + 3] = 255
            }
        }
    }

    /// Converts a whole `PixelBuffer` row (already RGBX or gray).
    static func widen(_ source: UnsafePointer<UInt8>, count: Int, into target: UnsafeMutablePointer<Float>) {
        gd_widen(source, count, target, StreamingResampler.avx2)
    }
}
