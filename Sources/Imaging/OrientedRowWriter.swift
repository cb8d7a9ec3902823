/// Collects decoded rows (RGBX or gray bytes, stored orientation) into an upright image: each
/// row goes straight to its displayed place (`ImageOrientation.place`).
/// Used when the preview is the decoded image itself, so its pixels never pass through the
/// float resampler.
final class OrientedRowWriter {
    let width: Int
    let height: Int
    let channels: Int
    let orientation: Int
    private var bytes: [UInt8]
    private var rowsWritten = 0

    /// A writer for a `width`×`height` image as stored, turned by EXIF `orientation` (1…8).
    init(width: Int, height: Int, channels: Int, orientation: Int) {
        precondition(channels == 1 || channels == 4)
        self.width = width
        self.height = height
        self.channels = channels
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        bytes = [UInt8](repeating: 0, count: width * height * channels)
    }

    /// Places the next `count` stored rows.
    func write(rows: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, count: Int) {
        precondition(rowsWritten + count <= height)
        let (width, height, channels, orientation) = (width, height, channels, orientation)
        let first = rowsWritten
        bytes.withUnsafeMutableBytes { image in
            for r in 0..<count {
                guard let row = rows[r] else { continue }
                ImageOrientation.place(
                    row: row, y: first + r, width: width, height: height, channels: channels,
                    orientation: orientation, into: image)
            }
        }
        rowsWritten += count
    }

    /// The upright image; call after the last row.
    func finish() -> PixelBuffer {
        precondition(rowsWritten == height, "writer fed \(rowsWritten) of \(height) rows")
        let swaps = orientation >= 5
        return PixelBuffer(
            width: swaps ? height : width, height: swaps ? width : height, channels: channels, bytes: bytes)
    }
}
