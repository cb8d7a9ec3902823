import Foundation
import GalleryTestSupport
import Testing

@testable import Imaging

/// Damaged originals of the formats phones make besides JPEG (issue #28: "decoder errors never
/// crash"): libpng's, libheif's and libwebp's errors come back as `ImageError`, wherever in the
/// file the damage is and whichever of the format's decoders (libpng's row reader or its simplified
/// API for interlaced files, libheif with libde265 or dav1d, libwebp's incremental decoder or
/// libwebpdemux's animation decoder) meets it. A crash or a trap ends the test process; any other
/// error type is an issue; an image that still decodes is fine (the damage may fall on pixels).
@Suite struct DamagedOriginalTests {
    static let spec = PNGTests.spec

    /// 96×64 noise, so that every part of each file carries coded pixels.
    static func noise(alpha: Bool = false) -> PNGWriter {
        PNGWriter(width: 96, height: 64, colorType: alpha ? .rgba : .rgb) { x, y in
            let p = [(x * 7 + y * 3) & 255, (y * 5 ^ x) & 255, (x * y + 17) & 255]
            return alpha ? p + [(x * 3 + y) & 255] : p
        }
    }

    /// One original per decoder path.
    static func originals() throws -> [(label: String, bytes: [UInt8])] {
        var interlaced16 = noise()
        interlaced16.interlaced = true
        interlaced16.bitDepth = 16
        interlaced16.pixel = { x, y in [x * 600, y * 1000, (x ^ y) * 500] }
        let palette = PNGWriter(
            width: 96, height: 64, colorType: .palette, palette: [(255, 0, 0, 255), (0, 90, 200, 128), (9, 9, 9, 0)]
        ) { x, y in [(x + y) % 3] }
        let png = noise().encode()
        let animation = try FixtureTools.run(
            "img2webp", ["-lossy", "-q", "80", "-d", "100", "{0}", "{1}", "-o", "{out}"],
            inputs: [("a.png", png), ("b.png", noise(alpha: true).encode())], output: "out.webp")
        return [
            ("png", png), ("png with alpha", noise(alpha: true).encode()),
            ("png interlaced 16-bit", interlaced16.encode()),
            ("png palette", palette.encode()), ("heic", try FixtureTools.heic(png, options: ["-q", "80"])),
            ("avif", try FixtureTools.heic(png, options: ["-q", "80"], avif: true)),
            ("webp lossy", try FixtureTools.webp(png, options: ["-q", "80"])),
            ("webp lossless alpha", try FixtureTools.webp(noise(alpha: true).encode(), options: ["-lossless"])),
            ("webp animated", animation),
            ("heic 10-bit PQ", try hdr(.pq, avif: false)), ("avif 10-bit HLG", try hdr(.hlg, avif: true)),
        ]
    }

    /// An HDR original of 96×64 noise (decision 074): decoded to 16 bits and tone mapped.
    static func hdr(_ transfer: HDRFixtures.Transfer, avif: Bool) throws -> [UInt8] {
        let png = HDRFixtures.png16(width: 96, height: 64) { x, y in [x * 600, y * 1000, (x ^ y) * 500] }
        return try HDRFixtures.file(png: png, width: 96, height: 64, transfer: transfer.code, avif: avif)
    }

    /// Processes `bytes` from memory or from a file: true for an image, false for an `ImageError`,
    /// an issue for anything else.
    static func processes(_ bytes: [UInt8], fromFile: Bool, _ label: String) throws -> Bool {
        do {
            if fromFile {
                _ = try ImagePipeline.process(fileAt: try TestImages.temporaryFile(bytes, name: "x.bin"), spec: spec)
            } else {
                _ = try ImagePipeline.process(bytes: bytes, spec: spec)
            }
            return true
        } catch is ImageError {
            return false
        } catch {
            Issue.record("\(label): \(type(of: error)) \(error), not an ImageError")
            return false
        }
    }

    /// 40 runs of 16 bytes spread over each file, each XORed (so a file is damaged where its
    /// headers, boxes, chunks or coded data are), from memory and from a file. Some of each file's
    /// damage must be refused, or the damage never reached an error path.
    @Test func damagedBytesAnywhere_AreAnImageErrorOrAnImage() throws {
        for (label, original) in try Self.originals() {
            var refused = 0
            for step in 0..<40 {
                var damaged = original
                let at = 8 + (original.count - 24) * step / 40
                for i in at..<min(at + 16, damaged.count) { damaged[i] ^= 0xA5 }
                if try !Self.processes(damaged, fromFile: step % 2 == 1, "\(label), bytes \(at)+16") { refused += 1 }
            }
            #expect(refused > 0, "\(label): every damaged file decoded")
        }
    }

    /// Every file cut at 30 lengths: refused, never an image made of what a decoder invented past
    /// the end (a cut PNG may still hold every row before `IEND`: that one may decode).
    @Test func cutFiles_AreAnImageError() throws {
        for (label, original) in try Self.originals() {
            for step in 1..<30 {
                let cut = Array(original.prefix(original.count * step / 30))
                do {
                    _ = try ImagePipeline.process(bytes: cut, spec: Self.spec)
                    #expect(label.hasPrefix("png") && step == 29, "\(label) cut to \(cut.count) bytes decoded")
                } catch is ImageError {
                } catch {
                    Issue.record("\(label) cut to \(cut.count): \(type(of: error)) \(error), not an ImageError")
                }
            }
        }
    }
}
