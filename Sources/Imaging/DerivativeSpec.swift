/// What to make from an original: sizes and JPEG quality of the thumbnail and preview.
public struct DerivativeSpec: Sendable, Equatable {
    /// The thumbnail's shorter displayed edge, in pixels (never enlarged). Default 400.
    public var thumbnailShortEdge: Int
    /// The preview's longer displayed edge, in pixels (never enlarged). Default 2048.
    public var previewLongEdge: Int
    /// JPEG quality 1…100 on libjpeg's scale, of the preview (the thumbnail's is a little higher,
    /// see `effectiveThumbnailQuality`). Default 80.
    public var quality: Int
    /// The thumbnail's quality; nil (the default) means `quality` + `thumbnailQualityBoost`.
    public var thumbnailQuality: Int?

    /// How far above `quality` a thumbnail is encoded by default. A thumbnail is a downscale shown
    /// at 1:1 in a grid, where the table's losses show most; at +3 every bench thumbnail scores at
    /// least vipsthumbnail's (Q80 with libjpeg's tables) for 13% more thumbnail bytes, 1.3% of
    /// the total (docs/architecture.md, "Aligned re-encode and the thumbnail's quality").
    public static let thumbnailQualityBoost = 3

    /// The quality the thumbnail is encoded at.
    public var effectiveThumbnailQuality: Int {
        min(max(thumbnailQuality ?? quality + Self.thumbnailQualityBoost, 1), 100)
    }
    /// Who quantizes the DCT coefficients. Default `.libjpeg`.
    public var quantizer: JPEGQuantizer

    /// Creates a spec; the defaults are galleryd's (see docs/architecture.md, "A job").
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
