/// Limits that protect the process from hostile or absurd images, checked before any pixel is decoded.
public struct ImageLimits: Sendable, Equatable {
    /// Largest width × height accepted. Default 100 MP: above any camera in common use, while a
    /// decompression bomb (a tiny file declaring 60000×60000) is refused before memory is allocated.
    public var maxPixels: Int
    /// Largest number of scans (SOS markers). Default 500, as libjpeg-turbo's TJFLAG_LIMITSCANS:
    /// real progressive files have about ten; thousands of tiny scans make decoding quadratic.
    public var maxScans: Int

    /// Creates limits; the defaults are the safe production values.
    public init(maxPixels: Int = 100_000_000, maxScans: Int = 500) {
        self.maxPixels = maxPixels
        self.maxScans = maxScans
    }
}
