import GalleryTestSupport
import Testing

@testable import Imaging

@Suite struct ImageFormatTests {
    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        HEIFAssembler.box("ftyp", Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) })
    }

    @Test func recognize_TellsFormatsByTheirBytes() {
        #expect(ImageFormat.recognize([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFormat.recognize([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]) == .png)
        #expect(ImageFormat.recognize(Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)[...]) == .webp)
        #expect(ImageFormat.recognize(Self.ftyp("heic", ["mif1", "heic"])[...]) == .heif)
        #expect(ImageFormat.recognize(Self.ftyp("heix", ["mif1"])[...]) == .heif)
        #expect(ImageFormat.recognize(Self.ftyp("mif1", ["heic"])[...]) == .heif)
        #expect(ImageFormat.recognize(Self.ftyp("msf1", ["hevc"])[...]) == .heif)
        #expect(ImageFormat.recognize(Self.ftyp("avif", ["mif1", "miaf"])[...]) == .avif)
        #expect(ImageFormat.recognize(Self.ftyp("mif1", ["miaf", "avif"])[...]) == .avif)
    }

    @Test func recognize_RefusesOtherFormats() {
        #expect(ImageFormat.recognize(Array("GIF89a\u{1}\u{0}".utf8)[...]) == nil)
        #expect(ImageFormat.recognize(Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8)[...]) == nil)
        #expect(ImageFormat.recognize(Self.ftyp("isom", ["iso2", "mp41"])[...]) == nil)
        #expect(ImageFormat.recognize([0x49, 0x49, 0x2A, 0]) == nil)
        #expect(ImageFormat.recognize([]) == nil)
        #expect(throws: ImageError.unsupportedFormat) {
            try ImageProbe.probe(bytes: Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8))
        }
    }

    @Test func probe_IgnoresTheExtension() throws {
        let png = PNGTests.quadrantsPNG()
        let path = try TestImages.temporaryFile(png, name: "holiday.jpg")
        let info = try ImageProbe.probe(fileAt: path)
        #expect(info.format == .png)
        #expect(info.format.contentType == "image/png" && info.format.fileExtension == "png")
        #expect(try ImageProbe.isComplete(fileAt: path, format: .png))
    }
}
