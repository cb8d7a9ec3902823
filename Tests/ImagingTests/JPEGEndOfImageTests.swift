import Foundation
import Testing

@testable import Imaging

/// Finding the end-of-image marker through headers, entropy-coded scans and stuffed bytes, in
/// memory and through the file reader's refills; trailing bytes after EOI are allowed.
struct JPEGEndOfImageTests {
    @Test func endOfImage_IsFound_InBaselineAndProgressiveJPEGs_AndMissingWhenCut() throws {
        for jpeg in [
            try TestImages.baseline(TestImages.noise(width: 96, height: 64)),
            try TestImages.progressive(TestImages.noise(width: 96, height: 64)),
        ] {
            #expect(JPEGEndOfImage.isComplete(bytes: jpeg))
            #expect(JPEGEndOfImage.isComplete(bytes: jpeg + [0xFF, 0xFF, 0x00, 0x12, 0x34]), "trailer after EOI")
            for cut in [jpeg.count - 1, jpeg.count - 2, jpeg.count / 2, 20] {
                #expect(!JPEGEndOfImage.isComplete(bytes: Array(jpeg.prefix(cut))), "cut at \(cut) of \(jpeg.count)")
            }
        }
        #expect(!JPEGEndOfImage.isComplete(bytes: []))
        #expect(!JPEGEndOfImage.isComplete(bytes: [0xFF, 0xD8]))
        #expect(!JPEGEndOfImage.isComplete(bytes: Array("GIF89a not a jpeg".utf8)))
    }

    @Test func endOfImage_IsFound_InAFileLargerThanTheReadBuffer() throws {
        // Noise compresses badly: well over the reader's 1 MiB buffer, so the scan spans refills.
        let jpeg = try TestImages.progressive(TestImages.noise(width: 1600, height: 1200), quality: 95)
        #expect(jpeg.count > 1 << 20)
        let path = NSTemporaryDirectory() + "galleryd-eoi-\(UUID().uuidString).jpg"
        defer { unlink(path) }
        try Data(jpeg).write(to: URL(fileURLWithPath: path))
        #expect(try JPEGEndOfImage.isComplete(fileAt: path))
        try Data(jpeg.prefix(jpeg.count - 100)).write(to: URL(fileURLWithPath: path))
        #expect(try !JPEGEndOfImage.isComplete(fileAt: path))
        #expect(throws: ImageError.self) { try JPEGEndOfImage.isComplete(fileAt: path + ".missing") }
    }
}
