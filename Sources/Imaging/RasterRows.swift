/// A decoded image (8-bit, or an HDR HEIF's or PNG's 16-bit `.rgb16`: decision 074) handed out top to
/// bottom in runs of finished rows, as its decoder makes them: a whole `DecodedRaster` in one run,
/// an incremental WebP decode a few rows at a time, so the resampler can start before the decode ends.
protocol RasterRows: AnyObject {
    /// Width in pixels of the rows handed out.
    var width: Int { get }
    /// Number of rows handed out in all.
    var height: Int { get }
    /// Pixel layout of the rows.
    var layout: DecodedRaster.Layout { get }
    /// The image's size in the file, before any shrinking while decoding.
    var fileSize: (width: Int, height: Int) { get }
    /// Whether the file says it is gray (a grey PNG), before any row is decoded (decision 069).
    var isGray: Bool { get }

    /// Calls `run` with each run of consecutive finished rows, top to bottom, as (the run's first
    /// row, bytes from one row to the next, rows in the run); throws when the decode fails part way.
    func forEachRun(_ run: (UnsafePointer<UInt8>, Int, Int) throws -> Void) throws
}

extension RasterRows {
    /// Rows handed out at the file's own size.
    var fileSize: (width: Int, height: Int) { (width, height) }
    /// Only a PNG says so in its header; other formats are checked on their pixels.
    var isGray: Bool { false }
}
