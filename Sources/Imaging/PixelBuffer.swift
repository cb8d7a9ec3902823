/// An 8-bit image in memory: `channels` bytes per pixel, rows packed without padding.
///
/// Colour images use 4 channels (red, green, blue, padding) so that rows line up with SIMD
/// lanes and libjpeg reads and writes them directly (JCS_EXT_RGBX); grayscale uses 1.
struct PixelBuffer {
    /// Width in pixels.
    var width: Int
    /// Height in pixels.
    var height: Int
    /// Bytes per pixel: 1 (gray) or 4 (RGBX).
    var channels: Int
    /// `height` rows of `width * channels` bytes.
    var bytes: [UInt8]

    /// A buffer filled with zeros.
    init(width: Int, height: Int, channels: Int) {
        self.width = width
        self.height = height
        self.channels = channels
        bytes = [UInt8](repeating: 0, count: width * height * channels)
    }

    /// Wraps existing bytes.
    init(width: Int, height: Int, channels: Int, bytes: [UInt8]) {
        precondition(bytes.count == width * height * channels)
        self.width = width
        self.height = height
        self.channels = channels
        self.bytes = bytes
    }

    /// Bytes per row.
    var stride: Int { width * channels }

    /// The pixel at (x, y) as RGB (gray repeated), for tests and the placeholder colour.
    func rgb(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let index = (y * width + x) * channels
        if channels == 1 { return (bytes[index], bytes[index], bytes[index]) }
        return (bytes[index], bytes[index + 1], bytes[index + 2])
    }

    /// Mean colour as `#rrggbb`.
    func averageColorHex() -> String {
        // Plain locals, not an array: the loop runs over every thumbnail pixel, and an array's
        // bounds and uniqueness checks made it 2% of `galleryd process`'s time.
        var red: UInt64 = 0
        var green: UInt64 = 0
        var blue: UInt64 = 0
        bytes.withUnsafeBufferPointer { p in
            guard let base = p.baseAddress else { return }
            let count = width * height
            if channels == 1 {
                for index in 0..<count { red &+= UInt64(base[index]) }
                green = red
                blue = red
            } else {
                var pixel = base
                for _ in 0..<count {
                    red &+= UInt64(pixel[0])
                    green &+= UInt64(pixel[1])
                    blue &+= UInt64(pixel[2])
                    pixel += channels
                }
            }
        }
        let sums = [red, green, blue]
        let count = UInt64(max(1, width * height))
        let digits = Array("0123456789abcdef".utf8)
        var text = "#"
        for sum in sums {
            let value = Int((sum + count / 2) / count)
            text.unicodeScalars.append(Unicode.Scalar(digits[value >> 4]))
            text.unicodeScalars.append(Unicode.Scalar(digits[value & 15]))
        }
        return text
    }
}
