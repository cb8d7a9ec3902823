/// Everything that can go wrong while probing, decoding or encoding an image.
///
/// Each case says what happened; `description` is a sentence fit for a log line or the
/// `error` column of a failed photo.
public enum ImageError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The bytes are none of the accepted formats (GIF, TIFF, text, …), or a JPEG flavour we do not decode.
    case unsupportedFormat
    /// The header declares more pixels than `ImageLimits.maxPixels`; refused before decoding.
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The file has more scans than `ImageLimits.maxScans` (the count reached when refused).
    case tooManyScans(Int)
    /// The data ends before the image does.
    case truncated
    /// The data is damaged (bad markers, bad Huffman codes, impossible header values).
    case corrupt(String)
    /// libjpeg refused to decode the image for another reason.
    case decodeFailed(String)
    /// libjpeg refused to encode a derivative.
    case encodeFailed(String)
    /// The file could not be read or written.
    case io(String)

    /// A human sentence describing the failure.
    public var description: String {
        switch self {
        case .unsupportedFormat:
            return "unsupported format: not a JPEG, PNG, WebP, HEIC or AVIF image"
        case .tooManyPixels(let width, let height, let limit):
            return "image is \(width)×\(height) (\(width * height) pixels), more than the limit of \(limit) pixels"
        case .tooManyScans(let count):
            return "JPEG has more scans (\(count)) than the limit allows"
        case .truncated:
            return "image data is truncated (premature end of file)"
        case .corrupt(let detail):
            return "image data is corrupt: \(detail)"
        case .decodeFailed(let detail):
            return "decoding failed: \(detail)"
        case .encodeFailed(let detail):
            return "JPEG encoding failed: \(detail)"
        case .io(let detail):
            return "I/O error: \(detail)"
        }
    }
}
