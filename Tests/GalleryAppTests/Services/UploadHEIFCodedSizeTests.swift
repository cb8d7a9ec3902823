import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp
@testable import Imaging

/// A HEIC decompression bomb behind a small `ispe` (issue #28: "dimensions read from headers and
/// refused over max_pixels before any decode"): a 64×64 image, or one tile of a 2×2 grid of them,
/// whose HEVC sequence parameter set codes 16384×16384, and a 64×64 AVIF whose AV1 sequence header
/// declares that size. Refused at `POST /parse/files` with 130
/// and the coded size, nothing stored; the same file with the true SPS is stored.
@Suite(.serialized) struct UploadHEIFCodedSizeTests {
    /// A 64×64 AVIF coded by `heif-enc -A`.
    static func avifTile() throws -> HEIFAssembler.Tile {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("avif-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (input, output) = (directory.appendingPathComponent("in.jpg"), directory.appendingPathComponent("out.avif"))
        let image = PixelBuffer(width: 64, height: 64, channels: 4)
        try Data(try JPEGEncoder.encode(image, quality: 95, iccProfile: nil)).write(to: input)
        try UploadFormatTests.run(["heif-enc", "-A", "-q", "50", "-o", output.path, input.path])
        return HEIFAssembler.Tile(heifEncOutput: [UInt8](try Data(contentsOf: output)), width: 64, height: 64)
    }

    @Test func upload_OfAHEICWhoseSPSCodesAHugePicture_IsRefusedWith130_AndLeavesNothing() throws {
        let tile = try UploadHEIFAuxiliaryTests.tile((r: 200, g: 60, b: 30), width: 64, height: 64)
        let huge = tile.coded(width: 16384, height: 16384)
        let avif = try Self.avifTile()
        let cases: [(label: String, bytes: [UInt8])] = [
            ("single image", HEIFAssembler.assemble(tiles: [huge], grid: false)),
            ("grid", HEIFAssembler.assemble(tiles: [tile, tile, huge, tile], columns: 2, grid: true)),
            ("AVIF", HEIFAssembler.assemble(tiles: [avif.codedAV1(width: 16384, height: 16384)], grid: false)),
        ]
        for item in cases {
            let server = try TestServer(workers: 0)
            defer { server.stop() }
            let r = try server.request(
                "POST", "/parse/files/IMG_0001.HEIC", body: Data(item.bytes), headers: ["Content-Type": "image/heic"])
            #expect(r.status == 400, "\(item.label)")
            #expect(r.json["code"] as? Int == 130, "\(item.label): \(r.text)")
            #expect((r.json["error"] as? String)?.contains("16384x16384") == true, "\(item.label): \(r.text)")
            try server.expectNothingStored(item.label)
        }
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let whole = HEIFAssembler.assemble(tiles: [tile, tile, tile, tile], columns: 2, grid: true)
        let r = try server.request(
            "POST", "/parse/files/IMG_0002.HEIC", body: Data(whole), headers: ["Content-Type": "image/heic"])
        #expect(r.status == 201, "\(r.text)")
    }
}
