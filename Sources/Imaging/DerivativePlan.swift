/// How one original becomes its two derivatives: target sizes in stored orientation, the DCT
/// scale to decode at, and where the thumbnail is resampled from.
///
/// The decode scale is the smallest `n/8` that still leaves at least three times the target size
/// on both axes (or the full image when the target is more than a third of it). DCT scaling
/// shrinks each 8×8 block on its own (a truncated IDCT), which leaves seams and ringing at the
/// block grid; the final Lanczos-3 pass hides them only when it shrinks enough. With vips'
/// "factor of two" (the previous rule), a 6028×3391 original decoded at 6/8 came out of
/// resampling at SSIMULACRA2 90.7 against a Lanczos downscale of the full image, against 97.5
/// from a full decode, and its preview scored 1.4 below vips'; a factor of three costs nothing
/// measurable there (the 6/8 IDCT has no SIMD path, full 8×8 does) and 3% on a 5640×3172
/// progressive file. The thumbnail is made from the preview's pixels when those are still at
/// least twice its size, so one decode serves both; otherwise it is fed from the same decoded rows.
struct DerivativePlan: Equatable {
    /// Preview size as stored (before orientation).
    let preview: (width: Int, height: Int)
    /// Thumbnail size as stored (before orientation).
    let thumbnail: (width: Int, height: Int)
    /// Decode at `scale`/8.
    let scale: Int
    /// Where the thumbnail comes from.
    let thumbnailSource: ThumbnailSource

    /// How many times the target size a DCT-scaled decode must keep (see the type's comment).
    static let decodeMargin = 3

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
        let needed = thumbnailSource == .decode ? [preview, thumbnail] : [preview]
        scale = Self.scale(width: info.width, height: info.height, covering: needed)
    }

    /// The sizes the decoded pixels feed: the preview, and the thumbnail when it is resampled
    /// from the decode rather than from the preview.
    var decodeTargets: [(width: Int, height: Int)] {
        thumbnailSource == .decode ? [preview, thumbnail] : [preview]
    }

    /// Output size of a libjpeg decode at `n`/8 (jdiv_round_up in jpeg_core_output_dimensions).
    static func scaledSize(width: Int, height: Int, scale n: Int) -> (width: Int, height: Int) {
        ((width * n + 7) / 8, (height * n + 7) / 8)
    }

    /// The smallest n in 1…8 whose decode keeps ≥ `margin`× every target (capped at full size).
    static func scale(
        width: Int, height: Int, covering targets: [(width: Int, height: Int)], margin: Int = decodeMargin
    ) -> Int {
        for n in 1...8 {
            let size = scaledSize(width: width, height: height, scale: n)
            let covers = targets.allSatisfy { target in
                size.width >= min(width, margin * target.width)
                    && size.height >= min(height, margin * target.height)
            }
            if covers { return n }
        }
        return 8
    }

    /// The smallest size of `width`×`height`, one factor on both axes, that keeps ≥ `decodeMargin`×
    /// every target (capped at full size): what a decoder that scales to any size (libwebp's
    /// rescaler) decodes at. libwebp's rescaler averages areas, so it leaves no block seams, but the
    /// same margin keeps the final Lanczos-3 pass doing the shaping, as for JPEG.
    static func freelyScaledSize(
        width: Int, height: Int, covering targets: [(width: Int, height: Int)]
    ) -> (width: Int, height: Int) {
        // Integers only: each target's axes, the other side rounded up to keep the aspect ratio.
        var scaled = (width: 0, height: 0)
        for target in targets {
            let needWidth = decodeMargin * target.width
            let needHeight = decodeMargin * target.height
            scaled.width = max(scaled.width, needWidth, (width * needHeight + height - 1) / height)
            scaled.height = max(scaled.height, needHeight, (height * needWidth + width - 1) / width)
        }
        guard scaled.width < width, scaled.height < height else { return (width, height) }
        return scaled
    }

    /// Field-wise equality (tuples are not Equatable, so it is spelled out).
    static func == (a: DerivativePlan, b: DerivativePlan) -> Bool {
        a.preview == b.preview && a.thumbnail == b.thumbnail && a.scale == b.scale
            && a.thumbnailSource == b.thumbnailSource
    }
}
