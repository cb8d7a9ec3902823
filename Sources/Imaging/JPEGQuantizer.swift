import CJPEGShim

/// Who turns pixels into quantized DCT coefficients when a derivative is encoded.
///
/// `libjpeg` is libjpeg-turbo's compressor (its DCT rounds every coefficient to the nearest
/// step). The other two run the coefficient path: colour conversion, chroma downsampling and
/// the forward DCT done in the shim exactly as libjpeg does them, then libjpeg's transcoder
/// (`jpeg_write_coefficients`) for the markers, the optimized Huffman tables and the progressive
/// scans. `rounding` rounds like libjpeg and writes the very same bytes (a check of the path);
/// `trellis` chooses each block's AC coefficients by rate and distortion, as mozjpeg does
/// (see docs/decisions/016-trellis-quantization-not-kept.md).
public enum JPEGQuantizer: String, Sendable, CaseIterable {
    /// libjpeg's compressor.
    case libjpeg
    /// The coefficient path with libjpeg's rounding: the same bytes as `libjpeg`.
    case rounding
    /// The coefficient path with trellis quantization of the AC coefficients.
    case trellis

    /// The shim's constant for this quantizer.
    var shimValue: gd_quantizer {
        switch self {
        case .libjpeg: GD_QUANTIZER_LIBJPEG
        case .rounding: GD_QUANTIZER_ROUND
        case .trellis: GD_QUANTIZER_TRELLIS
        }
    }
}
