/// The result of running the pipeline on one original.
public struct ProcessedImage: Sendable {
    /// What the header said (sizes as stored and as displayed, orientation, …).
    public var info: ImageInfo
    /// Shorter displayed edge `DerivativeSpec.thumbnailShortEdge`.
    public var thumbnail: EncodedImage
    /// Longer displayed edge `DerivativeSpec.previewLongEdge`.
    public var preview: EncodedImage
    /// Average colour as `#rrggbb`, a placeholder to paint before the thumbnail arrives.
    public var dominantColor: String
    /// The ThumbHash of the thumbnail's pixels (`ThumbHash`, about 25 bytes): the placeholder a
    /// grid paints before any image byte arrives.
    public var thumbHash: [UInt8]
    /// Milliseconds per stage, in order, for logs, metrics and the bench.
    public var timings: [(stage: String, milliseconds: Double)]
    /// Which pixels the thumbnail was resampled from.
    public var thumbnailSource: ThumbnailSource

    /// Creates a result.
    public init(
        info: ImageInfo, thumbnail: EncodedImage, preview: EncodedImage, dominantColor: String,
        timings: [(stage: String, milliseconds: Double)], thumbnailSource: ThumbnailSource = .preview,
        thumbHash: [UInt8] = []
    ) {
        self.thumbHash = thumbHash
        self.info = info
        self.thumbnail = thumbnail
        self.preview = preview
        self.dominantColor = dominantColor
        self.timings = timings
        self.thumbnailSource = thumbnailSource
    }
}
