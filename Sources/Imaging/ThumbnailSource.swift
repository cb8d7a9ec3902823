/// Which pixels the thumbnail was resampled from, reported so a slow case can be spotted.
public enum ThumbnailSource: String, Sendable, Equatable {
    /// Same size as the preview (a small original): the preview's pixels are used as they are.
    case samePixels
    /// Resampled from the preview's rows as they were produced (still ≥ 2× the thumbnail): the usual case.
    case preview
    /// Resampled from the decoded rows alongside the preview, because the preview is less than
    /// twice the thumbnail (small or very elongated originals): a second full-size resample.
    case decode
}
