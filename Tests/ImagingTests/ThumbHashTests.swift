import Foundation
import Testing

@testable import Imaging

/// ThumbHash against the reference (evanw/thumbhash, js/thumbhash.js run under Node on the same
/// generated pixels): the same bytes from the encoder, the same placeholder from the decoder.
struct ThumbHashTests {
    /// The pixels the reference was run on: x and y gradients, a diagonal blue ramp, and (with
    /// `alpha`) a varying alpha channel.
    static func pixels(width w: Int, height h: Int, alpha: Bool) -> [UInt8] {
        var rgba = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                rgba[i] = UInt8(x * 255 / (w - 1))
                rgba[i + 1] = UInt8(y * 255 / (h - 1))
                rgba[i + 2] = UInt8((x + y) * 7 % 256)
                rgba[i + 3] = alpha ? UInt8((x * 37 + y * 11) % 256) : 255
            }
        }
        return rgba
    }

    /// Reference outputs: hash (base64), decoded size, sum of decoded bytes, first two decoded pixels.
    static let reference: [(w: Int, h: Int, alpha: Bool, hash: String, size: (Int, Int), sum: Int, first: [UInt8])] = [
        (8, 6, false, "mPoNLZ6Ah4dwiHiHiHiHh4FwB/iH", (32, 23), 401_694, [10, 4, 19, 255, 9, 2, 18, 255]),
        (6, 8, false, "mAoOLR5wd3B4iIh4iIh4h3BxCPd4", (23, 32), 401_694, [4, 10, 19, 255, 7, 9, 19, 255]),
        (8, 6, true, "2xqGFI4ng3qQa4h3SAiJgn83wHSGaHiHCA==", (32, 26), 370_129, [133, 107, 50, 1, 133, 106, 50, 5]),
    ]

    @Test func encode_MatchesTheReference_Landscape_Portrait_AndAlpha() {
        for c in Self.reference {
            let hash = ThumbHash.encode(
                width: c.w, height: c.h, rgba: Self.pixels(width: c.w, height: c.h, alpha: c.alpha))
            #expect(Data(hash).base64EncodedString() == c.hash, "\(c.w)×\(c.h) alpha \(c.alpha)")
        }
    }

    @Test func decode_MatchesTheReference() throws {
        for c in Self.reference {
            let decoded = try #require(ThumbHash.decode(Array(Data(base64Encoded: c.hash)!)))
            #expect(decoded.width == c.size.0 && decoded.height == c.size.1, "\(c.hash)")
            #expect(decoded.rgba.reduce(0) { $0 + Int($1) } == c.sum, "\(c.hash)")
            #expect(Array(decoded.rgba.prefix(8)) == c.first, "\(c.hash)")
        }
    }

    @Test func roundTrip_KeepsTheAverageColourAndAspect() throws {
        // A 90×60 image, left half red, right half blue: the placeholder is wider than tall,
        // reddish on the left and bluish on the right.
        var rgba = [UInt8](repeating: 255, count: 90 * 60 * 4)
        for y in 0..<60 {
            for x in 0..<90 {
                let i = (y * 90 + x) * 4
                (rgba[i], rgba[i + 1], rgba[i + 2]) = x < 45 ? (220, 20, 20) : (20, 20, 220)
            }
        }
        let hash = ThumbHash.encode(width: 90, height: 60, rgba: rgba)
        #expect(hash.count <= 25)
        let decoded = try #require(ThumbHash.decode(hash))
        #expect(decoded.width == 32 && decoded.height < 32)
        let row = decoded.height / 2 * decoded.width * 4
        let left = row + 2 * 4
        let right = row + (decoded.width - 3) * 4
        #expect(decoded.rgba[left] > decoded.rgba[left + 2] + 60)
        #expect(decoded.rgba[right + 2] > decoded.rgba[right] + 60)
    }

    @Test func decode_RefusesBytesTooShort() {
        #expect(ThumbHash.decode([]) == nil)
        #expect(ThumbHash.decode([1, 2, 3, 4]) == nil)
        // A valid header whose AC terms are cut off.
        #expect(ThumbHash.decode(Array(Data(base64Encoded: "mPoNLZ6Ah4dwiHiHiHiHh4FwB/iH")!.prefix(8))) == nil)
    }

    @Test func pipeline_HashesTheThumbnail() throws {
        let jpeg = try TestImages.baseline(
            TestImages.quadrants(
                width: 300, height: 200, TestImages.red, TestImages.green, TestImages.blue, TestImages.yellow))
        let image = try ImagePipeline.process(bytes: jpeg)
        #expect(image.thumbHash.count >= 20 && image.thumbHash.count <= 25)
        let decoded = try #require(ThumbHash.decode(image.thumbHash))
        #expect(decoded.width == 32 && decoded.height < 32)
    }
}
