import CJPEGShim

/// Who turns pixels into quantized DCT coefficients when a derivative is encoded.
///
/// `libjpeg` is libjpeg-turbo's compressor (its DCT rounds every coefficient to the nearest
/// step). The others run the coefficient path: colour conversion, chroma downsampling and
/// the forward DCT done in the shim exactly as libjpeg does them, then libjpeg's transcoder
/// (`jpeg_write_coefficients`) for the markers, the optimized Huffman tables and the progressive
/// scans. `rounding` rounds like libjpeg and writes the very same bytes (a check of the path);
/// `trellis` chooses each block's AC coefficients by rate and distortion, as mozjpeg does
/// (see docs/decisions/016-trellis-quantization-not-kept.md); `zeroBias` rounds with a dead zone
/// scaled per block by its masking (docs/decisions/070-adaptive-zero-bias-quantization.md).
public enum JPEGQuantizer: String, Sendable, CaseIterable {
    /// libjpeg's compressor.
    case libjpeg
    /// The coefficient path with libjpeg's rounding: the same bytes as `libjpeg`.
    case rounding
    /// The coefficient path with trellis quantization of the AC coefficients.
    case trellis
    /// The coefficient path rounding with a dead zone scaled by each block's masking (`ZeroBias`).
    case zeroBias

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

    /// The zero-bias quantizer's dead zone: an AC coefficient that rounds to nonzero is sent as 0 while
    /// its magnitude is under 0.5 + `luma` (or `chroma`) × its weight × the block's masking steps. The
    /// weight is 0 at the DC, ¼ at the two lowest AC, 0.6 at the next three and 1 above; the masking is
    /// a / (a + `masking`), a the block's mean absolute AC coefficient in samples' units, the least of
    /// its own and its left, right and upper neighbours' (a chroma block: the mean of its luma blocks'):
    /// the dead zone widest in busy blocks, as jpegli's; a negative `masking` inverts the curve,
    /// |`masking`| / (a + |`masking`|), widest in smooth blocks. With both strengths 0 it writes
    /// `rounding`'s bytes. No rule uses it: on the bench's HEIC and AVIF previews neither curve beat
    /// Klein's own steps per byte on the photos over 0.91× vips' bytes (decision 070).
    public struct ZeroBias: Sendable, Equatable {
        public let luma: Float
        public let chroma: Float
        public let masking: Float

        public init(luma: Float, chroma: Float, masking: Float) {
            (self.luma, self.chroma, self.masking) = (luma, chroma, masking)
        }

        /// What `zeroBias` takes when none is given (a configured quantizer): the smooth-block curve at 0.2,
        /// the sweep's best median gain over Klein's steps at equal bytes (decision 070, config i7).
        public static let standard = ZeroBias(luma: 0.2, chroma: 0.2, masking: -2)

        /// Sets the request's dead zone.
        func apply(to request: inout gd_encode_request) {
            request.zero_bias_luma = luma
            request.zero_bias_chroma = chroma
            request.zero_bias_masking = masking
        }
    }

    /// The shim's constant for this quantizer.
    var shimValue: gd_quantizer {
        switch self {
        case .libjpeg: GD_QUANTIZER_LIBJPEG
        case .rounding: GD_QUANTIZER_ROUND
        case .trellis: GD_QUANTIZER_TRELLIS
        case .zeroBias: GD_QUANTIZER_ZERO_BIAS
        }
    }
}
