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

    /// Trellis' lambda, the weight of distortion against bits: 2^`logScale1` / (2^`logScale2` + the
    /// block's mean AC energy). mozjpeg's `masked` lets texture hide error (a lower lambda in busy
    /// blocks); `flat` is nearly the same lambda in every block
    /// (docs/decisions/016-trellis-quantization-not-kept.md, 063-trellis-for-webp-outputs.md).
    public struct TrellisLambda: Sendable, Equatable {
        public let logScale1: Float
        public let logScale2: Float

        /// mozjpeg's defaults (lambda_log_scale1 and 2), which the shim takes when none is given.
        public static let masked = TrellisLambda(logScale1: 14.75, logScale2: 16.5)
        /// The texture masking nearly off: 2^18.25 / (2^20 + energy).
        public static let flat = TrellisLambda(logScale1: 18.25, logScale2: 20)
    }

    /// The shim's constant for this quantizer.
    var shimValue: gd_quantizer {
        switch self {
        case .libjpeg: GD_QUANTIZER_LIBJPEG
        case .rounding: GD_QUANTIZER_ROUND
        case .trellis: GD_QUANTIZER_TRELLIS
        }
    }
}
