/// The colour space of the components stored in a JPEG, as libjpeg infers it from the
/// component count and the JFIF/Adobe markers.
public enum ImageColorSpace: String, Sendable, Equatable {
    /// One component.
    case grayscale
    /// Three components, luma and chroma (JFIF, the usual case).
    case ycbcr
    /// Three components stored as RGB (Adobe transform 0 or component ids R, G, B).
    case rgb
    /// Four components, cyan, magenta, yellow, black.
    case cmyk
    /// Four components, YCbCr plus black (Adobe transform 2).
    case ycck
}
