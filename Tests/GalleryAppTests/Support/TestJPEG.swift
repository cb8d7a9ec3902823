import Foundation

@testable import Imaging

/// JPEGs made in the test, so no fixture files are needed: gradients with a little noise
/// (so each seed gives different bytes and a realistic entropy), with optional EXIF orientation.
enum TestJPEG {
    /// A width×height colour JPEG; `seed` varies the bytes so uploads do not deduplicate.
    static func make(width: Int, height: Int, seed: UInt64 = 1, quality: Int = 85) throws -> [UInt8] {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let n = UInt8(truncatingIfNeeded: state >> 59)
                let i = (y * width + x) * 4
                image.bytes[i] = UInt8(truncatingIfNeeded: x * 255 / max(1, width - 1)) &+ n
                image.bytes[i + 1] = UInt8(truncatingIfNeeded: y * 255 / max(1, height - 1))
                image.bytes[i + 2] = UInt8(truncatingIfNeeded: Int(seed % 200) + 30)
                image.bytes[i + 3] = 255
            }
        }
        return try JPEGEncoder.encode(image, quality: quality, iccProfile: nil)
    }

    /// The same JPEG with an APP1 EXIF segment carrying `orientation` (1–8) inserted after SOI.
    static func withOrientation(_ jpeg: [UInt8], _ orientation: UInt16) -> [UInt8] {
        // Big-endian TIFF: header, IFD0 with one entry (0x0112 SHORT 1 = orientation), next IFD 0.
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01]
        tiff += [
            0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, UInt8(orientation >> 8), UInt8(orientation & 0xFF), 0, 0,
        ]
        tiff += [0, 0, 0, 0]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    /// The same JPEG with an APP1 EXIF segment carrying IFD0 Make and Model (raw bytes, a NUL added).
    static func withCamera(_ jpeg: [UInt8], make: [UInt8], model: [UInt8]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }
        // Big-endian TIFF: header, IFD0 with two ASCII entries pointing after it, next IFD 0.
        let values = [make + [0], model + [0]]
        var offset = 8 + 2 + 2 * 12 + 4
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A] + u32(8) + u16(2)
        for (tag, value) in zip([0x010F, 0x0110], values) {
            tiff += u16(tag) + u16(2) + u32(value.count) + u32(offset)
            offset += value.count
        }
        tiff += u32(0) + values[0] + values[1]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let segment: [UInt8] = [0xFF, 0xE1] + u16(payload.count + 2) + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }
}
