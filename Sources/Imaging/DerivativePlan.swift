/// How one original becomes its two derivatives: target sizes in stored orientation, the DCT
/// scale to decode at, and where the thumbnail is resampled from.
///
/// The decode scale is the smallest `n/8` that still leaves at least twice the target size on
/// both axes (or the full image when the target is more than half of it), as vips_thumbnail
/// leaves "a factor of two for the final resize": block-shrinking further would alias. The
/// thumbnail is made from the preview's pixels when those are still at least twice its size,
/// so one decode serves both; otherwise it is fed from the same decoded rows.
struct DerivativePlan: Equatable {
    /// Preview size as stored (before orientation).
    let preview: (width: Int, height: Int)
    /// Thumbnail size as stored (before orientation).
    let thumbnail: (width: Int, height: Int)
    /// Decode at `scale`/8.
    let scale: Int
    /// Where the thumbnail comes from.
    let thumbnailSource: ThumbnailSource

    /// Plans the derivatives of `info` (sizes as displayed in `spec`, turned to stored orientation).
    init(info: ImageInfo, spec: DerivativeSpec) {
        let displayPreview = spec.previewSize(width: info.displayWidth, height: info.displayHeight)
        let displayThumbnail = spec.thumbnailSize(width: info.displayWidth, height: info.displayHeight)
        let swap = info.orientationSwapsAxes
        preview = swap ? (displayPreview.height, displayPreview.width) : displayPreview
        thumbnail = swap ? (displayThumbnail.height, displayThumbnail.width) : displayThumbnail

        if preview == thumbnail {
            thumbnailSource = .samePixels
        } else if preview.width >= 2 * thumbnail.width && preview.height >= 2 * thumbnail.height {
            thumbnailSource = .preview
        } else {
            thumbnailSource = .decode
        }
        var needed = [preview]
        if thumbnailSource == .decode { needed.append(thumbnail) }
        scale = Self.scale(width: info.width, height: info.height, covering: needed)
    }

    /// Output size of a libjpeg decode at `n`/8 (jdiv_round_up in jpeg_core_output_dimensions).
    static func scaledSize(width: Int, height: Int, scale n: Int) -> (width: Int, height: Int) {
        ((width * n + 7) / 8, (height * n + 7) / 8)
    }

    /// The smallest n in 1…8 whose decode keeps ≥ 2× every target (capped at full size).
    static func scale(width: Int, height: Int, covering targets: [(width: Int, height: Int)]) -> Int {
        for n in 1...8 {
            let size = scaledSize(width: width, height: height, scale: n)
            let covers = targets.allSatisfy { target in
                size.width >= min(width, 2 * target.width) && size.height >= min(height, 2 * target.height)
            }
            if covers { return n }
        }
        return 8
    }

    /// Field-wise equality (tuples are not Equatable, so it is spelled out).
    static func == (a: DerivativePlan, b: DerivativePlan) -> Bool {
        a.preview == b.preview && a.thumbnail == b.thumbnail && a.scale == b.scale
            && a.thumbnailSource == b.thumbnailSource
    }
}
