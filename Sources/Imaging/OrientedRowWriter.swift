/// Collects decoded rows (RGBX or gray bytes, stored orientation) into an upright image: each
/// row goes straight to its displayed place, one pixel every `step` (`ImageOrientation.placement`).
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
        bytes.withUnsafeMutableBytes { raw in
            for r in 0..<count {
                guard let row = rows[r] else { continue }
                let (base, step) = ImageOrientation.placement(orientation, width: width, height: height, row: first + r)
                if step == 1 {
                    (raw.baseAddress! + base * channels).copyMemory(from: row, byteCount: width * channels)
                } else if channels == 4 {
                    let dst = raw.bindMemory(to: UInt32.self).baseAddress!
                    UnsafeRawPointer(row).withMemoryRebound(to: UInt32.self, capacity: width) { src in
                        var index = base
                        for x in 0..<width {
                            dst[index] = src[x]
                            index += step
                        }
                    }
                } else {
                    let dst = raw.bindMemory(to: UInt8.self).baseAddress!
                    var index = base
                    for x in 0..<width {
                        dst[index] = row[x]
                        index += step
                    }
                }
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
