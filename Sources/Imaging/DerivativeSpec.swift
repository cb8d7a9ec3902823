/// What to make from an original: sizes and JPEG quality of the thumbnail and preview.
public struct DerivativeSpec: Sendable, Equatable {
    /// The thumbnail's shorter displayed edge, in pixels (never enlarged). Default 400.
    public var thumbnailShortEdge: Int
    /// The preview's longer displayed edge, in pixels (never enlarged). Default 2048.
    public var previewLongEdge: Int
    /// JPEG quality 1…100 on libjpeg's scale, of a downscaled preview (the thumbnail and a preview
    /// that keeps the original's size are encoded a little higher, see `thumbnailQualityBoost`; PNG and
    /// WebP originals' derivatives step from these, see `SourceEncoderSettings`). Default 80.
    public var quality: Int
    /// Who quantizes the DCT coefficients. Default `.libjpeg`.
    public var quantizer: JPEGQuantizer
    /// The thumbnail's quality; nil (the default) means `quality` + `thumbnailQualityBoost`.
    public var thumbnailQuality: Int?

    /// Where the quality goes beyond the configured one. Measured with SSIMULACRA2 on the bench
    /// photos against vipsthumbnail at Q80 (docs/decisions/019-aligned-reencode-dc-step-qualities.md):
    /// with `QuantizationTables` but one quality for everything, the
    /// portraits' and test_gray's thumbnails and two previews still scored below vips; with these boosts
    /// every output scores at least vips' for about 2% more bytes (0.908× vips' bytes in all).
    ///
    /// A thumbnail is a downscale shown at 1:1 in a grid, where the table's losses show most: its
    /// luma is 2 qualities higher, its chroma 4 above that (the portraits' thumbnails wanted colour
    /// more than luma; a gray one needs the luma).
    public static let thumbnailQualityBoost = 2
    /// How far above the thumbnail's quality its chroma table is scaled.
    public static let thumbnailChromaQualityBoost = 4
    /// A preview that keeps the original's size is the original re-encoded, every quantization error
    /// at 1:1 and no downscale to average it away; it is encoded 2 qualities higher (china −0.73 →
    /// +1.28 against vips, mate_Storm −0.05 → +0.32). Where the original's table is coarse its
    /// steps decide anyway (`QuantizationTables(aligningTo:quality:)`), so this costs little there.
    public static let originalSizePreviewQualityBoost = 2

    /// The quality the thumbnail is encoded at.
    public var effectiveThumbnailQuality: Int {
        min(max(thumbnailQuality ?? quality + Self.thumbnailQualityBoost, 1), 100)
    }

    /// The quality of a preview, which `keepsOriginalSize` or is a downscale.
    public func previewQuality(keepsOriginalSize: Bool) -> Int {
        min(max(quality + (keepsOriginalSize ? Self.originalSizePreviewQualityBoost : 0), 1), 100)
    }

    /// Creates a spec; the defaults are galleryd's
    /// (see docs/decisions/019-aligned-reencode-dc-step-qualities.md).
    public init(
        thumbnailShortEdge: Int = 400, previewLongEdge: Int = 2048, quality: Int = 80,
        quantizer: JPEGQuantizer = .libjpeg, thumbnailQuality: Int? = nil
    ) {
        self.thumbnailQuality = thumbnailQuality
        self.thumbnailShortEdge = thumbnailShortEdge
        self.previewLongEdge = previewLongEdge
        self.quality = quality
        self.quantizer = quantizer
    }

    /// The thumbnail size for an image displayed at `width`×`height`.
    public func thumbnailSize(width: Int, height: Int) -> (width: Int, height: Int) {
        Self.fit(width: width, height: height, edge: thumbnailShortEdge, longer: false)
    }

    /// The preview size for an image displayed at `width`×`height`.
    public func previewSize(width: Int, height: Int) -> (width: Int, height: Int) {
        Self.fit(width: width, height: height, edge: previewLongEdge, longer: true)
    }

    /// Scales so the chosen edge becomes `edge`, never enlarging. As vips_thumbnail does, the
    /// shrink factor is computed from that edge (`shrink = source edge / edge`), which therefore
    /// comes out exact, and the other edge is `round(other / shrink)` (half away from zero),
    /// at least 1 pixel.
    static func fit(width: Int, height: Int, edge: Int, longer: Bool) -> (width: Int, height: Int) {
        let widthIsEdge = longer ? width >= height : width <= height
        let source = widthIsEdge ? width : height
        let other = widthIsEdge ? height : width
        guard edge > 0, edge < source else { return (width, height) }
        let shrink = Double(source) / Double(edge)
        let scaledOther = min(other, max(1, Int((Double(other) / shrink).rounded())))
        return widthIsEdge ? (edge, scaledOther) : (scaledOther, edge)
    }
}
