import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp
@testable import Imaging

/// A HEIC as a phone writes it, with images beside the primary (issue #28: "files with several
/// images (the primary one), depth/alpha auxiliary images ignored", "the thumbnail item"), through
/// `POST /parse/files` and the worker, and through `galleryd import`: the photo is ready with the
/// primary's size, aspect ratio and colour. Beside the 160×120 primary: an Apple gain map larger
/// than it, a corrupt depth map, a corrupt alpha image of its size (libheif decodes that one with
/// the primary unless it is hidden), a thumbnail item and a larger top-level image listed first,
/// each blue.
@Suite(.serialized) struct UploadHEIFAuxiliaryTests {
    static let primaryColor = (r: 200, g: 60, b: 30)

    /// A solid `width`×`height` image coded by `heif-enc`.
    static func tile(_ color: (r: Int, g: Int, b: Int), width: Int, height: Int) throws -> HEIFAssembler.Tile {
        var image = PixelBuffer(width: width, height: height, channels: 4)
        for i in stride(from: 0, to: image.bytes.count, by: 4) {
            image.bytes.replaceSubrange(i..<i + 4, with: [UInt8(color.r), UInt8(color.g), UInt8(color.b), 255])
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("aux-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (input, output) = (directory.appendingPathComponent("in.jpg"), directory.appendingPathComponent("out.heic"))
        try Data(try JPEGEncoder.encode(image, quality: 95, iccProfile: nil)).write(to: input)
        try UploadFormatTests.run(["heif-enc", "-q", "90", "-o", output.path, input.path])
        return HEIFAssembler.Tile(heifEncOutput: [UInt8](try Data(contentsOf: output)), width: width, height: height)
    }

    static func phoneHEIC() throws -> [UInt8] {
        let blue = (r: 30, g: 40, b: 210)
        return HEIFAssembler.assemble(
            tiles: [try tile(primaryColor, width: 160, height: 120)], grid: false,
            attached: [
                .init(try tile(blue, width: 320, height: 240), .otherImage),
                .init(try tile(blue, width: 320, height: 240), .auxiliary(HEIFAssembler.appleGainMapType)),
                .init(try tile(blue, width: 160, height: 120), .auxiliary(HEIFAssembler.depthType), corrupt: true),
                .init(try tile(blue, width: 160, height: 120), .auxiliary(HEIFAssembler.alphaType), corrupt: true),
                .init(try tile(blue, width: 80, height: 64), .thumbnail),
            ])
    }

    /// The photo is ready, with the primary's size, aspect ratio and colour.
    static func expectThePrimarysPhoto(_ server: TestServer, _ id: String, _ label: String) throws {
        #expect(try server.waitForProcessing(id) == "ready", "\(label)")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["contentType"] as? String == "image/heic", "\(label)")
        #expect(photo["width"] as? Int == 160 && photo["height"] as? Int == 120, "\(label): \(photo)")
        #expect(photo["aspectRatio"] as? Double == Double(160) / 120, "\(label)")
        #expect(photo["thumbnailWidth"] as? Int == 43 && photo["thumbnailHeight"] as? Int == 32, "\(label)")
        let hex = try #require(photo["dominantColor"] as? String, "\(label): \(photo)")
        let value = try #require(Int(hex.dropFirst(), radix: 16), "\(label): \(hex)")
        let (r, g, b) = (value >> 16, value >> 8 & 0xFF, value & 0xFF)
        let c = primaryColor
        #expect(abs(r - c.r) <= 16 && abs(g - c.g) <= 16 && abs(b - c.b) <= 16, "\(label): \(hex)")
    }

    @Test func upload_OfAPhonesHEICWithImagesBesideThePrimary_GivesThePrimarysPhoto() throws {
        let bytes = try Self.phoneHEIC()
        let server = try TestServer(workers: 1, configure: UploadTests.smallDerivatives)
        defer { server.stop() }
        let file = try server.request(
            "POST", "/parse/files/IMG_0001.HEIC", body: Data(bytes), headers: ["Content-Type": "image/heic"])
        #expect(file.status == 201, "\(file.text)")
        let name = try #require(file.json["name"] as? String, "\(file.text)")
        let created = try server.json("POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]])
        let id = try #require(created.json["objectId"] as? String, "\(created.text)")
        try Self.expectThePrimarysPhoto(server, id, "upload")
    }

    @Test func import_OfAPhonesHEICWithImagesBesideThePrimary_GivesThePrimarysPhoto() throws {
        let folder = NSTemporaryDirectory() + "galleryd-import-aux-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(try Self.phoneHEIC()).write(to: URL(fileURLWithPath: folder + "/IMG_0002.HEIC"))
        let server = try TestServer(workers: 1, configure: UploadTests.smallDerivatives)
        defer { server.stop() }
        let service = ImportService(
            uploads: server.application.uploads, spoolDirectory: server.application.store.spoolDirectory)
        guard case .imported(let id) = service.importFile(folder + "/IMG_0002.HEIC") else {
            Issue.record("not imported")
            return
        }
        try Self.expectThePrimarysPhoto(server, id, "import")
    }
}
