import CJPEG
import Foundation

@testable import Imaging

/// Synthetic images and hand-built JPEG segments for the tests (no files from outside the repo).
enum TestImages {
    /// Colours of a quadrant image, clockwise from top-left.
    static let red: (UInt8, UInt8, UInt8) = (220, 30, 30)
    static let green: (UInt8, UInt8, UInt8) = (30, 200, 40)
    static let blue: (UInt8, UInt8, UInt8) = (30, 40, 210)
    static let yellow: (UInt8, UInt8, UInt8) = (230, 220, 40)

    /// An RGBX image of four flat quadrants: top-left, top-right, bottom-left, bottom-right.
    static func quadrants(
        width: Int, height: Int,
        _ tl: (UInt8, UInt8, UInt8), _ tr: (UInt8, UInt8, UInt8),
        _ bl: (UInt8, UInt8, UInt8), _ br: (UInt8, UInt8, UInt8)
    ) -> PixelBuffer {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for y in 0..<height {
            for x in 0..<width {
                let top = y < height / 2
                let left = x < width / 2
                let c = top ? (left ? tl : tr) : (left ? bl : br)
                let i = (y * width + x) * 4
                image.bytes[i] = c.0
                image.bytes[i + 1] = c.1
                image.bytes[i + 2] = c.2
                image.bytes[i + 3] = 255
            }
        }
        return image
    }

    /// A flat image of one colour (RGBX), or gray when `gray` is set.
    static func solid(width: Int, height: Int, _ c: (UInt8, UInt8, UInt8), gray: Bool = false) -> PixelBuffer {
        if gray {
            return PixelBuffer(
                width: width, height: height, channels: 1,
                bytes: [UInt8](repeating: c.0, count: width * height))
        }
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for i in 0..<width * height {
            image.bytes[4 * i] = c.0
            image.bytes[4 * i + 1] = c.1
            image.bytes[4 * i + 2] = c.2
            image.bytes[4 * i + 3] = 255
        }
        return image
    }

    /// Deterministic noise, so truncating or corrupting the entropy data lands mid-scan.
    static func noise(width: Int, height: Int, seed: UInt64 = 42) -> PixelBuffer {
        var state = seed
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for i in 0..<image.bytes.count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            image.bytes[i] = UInt8(truncatingIfNeeded: state >> 33)
        }
        return image
    }

    /// A baseline (sequential) JPEG with libjpeg's default tables.
    static func baseline(_ image: PixelBuffer, quality: Int = 90) throws -> [UInt8] {
        let gray = image.channels == 1
        return try JPEGEncoder.encode(
            image, inputColorSpace: gray ? JCS_GRAYSCALE : JCS_EXT_RGBX,
            jpegColorSpace: gray ? JCS_GRAYSCALE : JCS_YCbCr, quality: quality, quantTable: nil, scans: nil,
            subsampleChroma: true, writeAdobe: false, iccProfile: nil)
    }

    /// A progressive JPEG (the pipeline's own encoder).
    static func progressive(_ image: PixelBuffer, quality: Int = 90, icc: [UInt8]? = nil) throws -> [UInt8] {
        try JPEGEncoder.encode(image, quality: quality, iccProfile: icc)
    }

    /// How a CMYK test file stores its ink values.
    enum CMYKFlavor {
        /// Plain CMYK, no Adobe marker, 0 = no ink.
        case plain
        /// Photoshop's: Adobe marker with transform 0, values inverted (255 = no ink).
        case adobeInverted
        /// Adobe marker with transform 2 (YCCK), values inverted.
        case adobeYCCK
    }

    /// A CMYK JPEG of `image` (RGB quadrants), converted with K = 1 − max(R, G, B).
    static func cmyk(_ image: PixelBuffer, flavor: CMYKFlavor) throws -> [UInt8] {
        var cmyk = PixelBuffer(width: image.width, height: image.height, channels: 4)
        for i in 0..<image.width * image.height {
            let r = Double(image.bytes[4 * i]) / 255
            let g = Double(image.bytes[4 * i + 1]) / 255
            let b = Double(image.bytes[4 * i + 2]) / 255
            let k = 1 - max(r, g, b)
            let scale = k < 1 ? 1 / (1 - k) : 0
            var values = [(1 - r - k) * scale, (1 - g - k) * scale, (1 - b - k) * scale, k]
            if flavor != .plain { values = values.map { 1 - $0 } }
            for c in 0..<4 { cmyk.bytes[4 * i + c] = UInt8((values[c] * 255).rounded()) }
        }
        return try JPEGEncoder.encode(
            cmyk, inputColorSpace: JCS_CMYK, jpegColorSpace: flavor == .adobeYCCK ? JCS_YCCK : JCS_CMYK,
            quality: 95, quantTable: nil, scans: nil, subsampleChroma: false, writeAdobe: flavor != .plain,
            iccProfile: nil)
    }

    /// Inserts `segment` (marker included) right after SOI.
    static func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    /// An APP1 EXIF segment with Orientation (and Make, Model when given, as raw bytes) in IFD0
    /// and DateTimeOriginal (+ offset, sub-seconds) in the Exif IFD, in the given byte order.
    static func exifSegment(
        orientation: UInt16, littleEndian: Bool, date: String? = nil, offset: String? = nil, subSeconds: String? = nil,
        make: [UInt8]? = nil, model: [UInt8]? = nil
    ) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] {
            littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)]
        }
        func u32(_ v: UInt32) -> [UInt8] {
            let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return littleEndian ? b.reversed() : b
        }
        var exifEntries: [(tag: UInt16, bytes: [UInt8])] = []
        if let date { exifEntries.append((0x9003, Array(date.utf8) + [0])) }
        if let offset { exifEntries.append((0x9011, Array(offset.utf8) + [0])) }
        if let subSeconds { exifEntries.append((0x9291, Array(subSeconds.utf8) + [0])) }
        var cameraEntries: [(tag: UInt16, bytes: [UInt8])] = []
        if let make { cameraEntries.append((0x010F, make + [0])) }
        if let model { cameraEntries.append((0x0110, model + [0])) }

        // IFD0 at 8 (camera entries, orientation, Exif pointer; next-IFD 0), the Exif IFD after it,
        // then the values too long to be inline.
        let ifd0Size = 2 + (cameraEntries.count + 2) * 12 + 4
        let exifIFDOffset = 8 + ifd0Size
        let exifIFDSize = 2 + exifEntries.count * 12 + 4
        var dataOffset = exifIFDOffset + exifIFDSize
        var data: [UInt8] = []
        func asciiEntry(_ entry: (tag: UInt16, bytes: [UInt8])) -> [UInt8] {
            let header = u16(entry.tag) + u16(2) + u32(UInt32(entry.bytes.count))
            if entry.bytes.count <= 4 {
                return header + entry.bytes + [UInt8](repeating: 0, count: 4 - entry.bytes.count)
            }
            defer {
                data += entry.bytes
                dataOffset += entry.bytes.count
            }
            return header + u32(UInt32(dataOffset))
        }
        var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
        tiff += u16(42) + u32(8)
        tiff += u16(UInt16(cameraEntries.count + 2))
        for entry in cameraEntries { tiff += asciiEntry(entry) }
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(orientation) + [0, 0]
        tiff += u16(0x8769) + u16(4) + u32(1) + u32(UInt32(exifIFDOffset))
        tiff += u32(0)
        tiff += u16(UInt16(exifEntries.count))
        for entry in exifEntries { tiff += asciiEntry(entry) }
        tiff += u32(0)
        tiff += data
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// SOI + SOF0 declaring `width`×`height` with three components, then a bare SOS: a header
    /// that promises a huge image in a few dozen bytes.
    static func headerOnly(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [
            0xFF, 0xC0, 0x00, 17, 8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF),
            3,
        ]
        bytes += [1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        bytes += [0xFF, 0xDA, 0x00, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]
        return bytes
    }

    /// A fake ICC profile of `size` bytes whose header names `space` ("RGB ", "GRAY") as data colour space.
    static func iccProfile(size: Int, space: String = "RGB ") -> [UInt8] {
        var profile = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        profile.replaceSubrange(16..<20, with: Array(space.utf8))
        return profile
    }

    /// Decodes a JPEG fully (for checking outputs).
    static func decode(_ jpeg: [UInt8]) throws -> PixelBuffer {
        let info = try ImageProbe.probe(bytes: jpeg)
        let decoder = try JPEGDecoder(bytes: jpeg, maxScans: 1000)
        try decoder.readHeader()
        let format: JPEGDecoder.OutputFormat = info.components == 1 ? .gray : .rgbx
        let size = try decoder.start(scale: 8, format: format)
        var image = PixelBuffer(width: size.width, height: size.height, channels: format.bytesPerPixel)
        let stride = image.stride
        try image.bytes.withUnsafeMutableBufferPointer { buffer in
            var row: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            var y = 0
            while y < size.height {
                row = buffer.baseAddress! + y * stride
                y += try decoder.readScanlines(into: &row, count: 1)
            }
        }
        try decoder.finish()
        return image
    }

    /// Writes bytes to a fresh temporary file and returns its path.
    static func temporaryFile(_ bytes: [UInt8], name: String = "image.jpg") throws -> String {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("imaging-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Segments of a JPEG up to EOI: (marker code, offset of marker, payload).
    static func segments(_ jpeg: [UInt8]) -> [(code: UInt8, payload: ArraySlice<UInt8>)] {
        var result: [(UInt8, ArraySlice<UInt8>)] = []
        var i = 2
        while i + 4 <= jpeg.count {
            guard jpeg[i] == 0xFF else {
                i += 1
                continue
            }
            let code = jpeg[i + 1]
            if code == 0xD9 { break }
            if code == 0x00 || code == 0xFF || (0xD0...0xD7).contains(code) {
                i += 1
                continue
            }
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            result.append((code, jpeg[(i + 4)..<min(jpeg.count, i + 2 + length)]))
            i += 2 + length
            if code == 0xDA {
                // Skip entropy-coded data to the next marker that is not a stuffed byte or RST.
                while i + 1 < jpeg.count
                    && !(jpeg[i] == 0xFF && jpeg[i + 1] != 0 && !(0xD0...0xD7).contains(jpeg[i + 1]))
                {
                    i += 1
                }
            }
        }
        return result
    }
}
