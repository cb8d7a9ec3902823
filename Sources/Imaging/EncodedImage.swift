/// A derivative as JPEG bytes with its pixel size (as displayed).
public struct EncodedImage: Sendable, Equatable {
    /// The JPEG file.
    public var jpeg: [UInt8]
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Wraps encoded bytes.
    public init(jpeg: [UInt8], width: Int, height: Int) {
        self.jpeg = jpeg
        self.width = width
        self.height = height
    }
}
