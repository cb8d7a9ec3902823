import Crypto
import Foundation
import Testing

@testable import GalleryApp
@testable import Imaging

/// Uploads of the formats phones make besides JPEG (issue #28): recognised by their bytes whatever
/// the name and `Content-Type`, stored and served byte for byte under their own extension and
/// media type, with JPEG derivatives; cut-off files refused with 130 and nothing stored.
@Suite(.serialized) struct UploadFormatTests {
    /// A HEIC and, decoded from it by `heif-convert`, a PNG of a 160×120 test photo (`heif-enc` and
    /// `heif-convert` come with libheif-examples, which `scripts/deps.sh` installs).
    static func fixtures() throws -> (heic: [UInt8], png: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "upload-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let jpeg = directory.appendingPathComponent("in.jpg").path
        try Data(try TestJPEG.make(width: 160, height: 120, seed: 28)).write(to: URL(fileURLWithPath: jpeg))
        let heic = directory.appendingPathComponent("out.heic").path
        let png = directory.appendingPathComponent("out.png").path
        try run(["heif-enc", "-q", "90", "-o", heic, jpeg])
        try run(["heif-convert", heic, png])
        return (
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: heic))),
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: png)))
        )
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestSetupError(description: "\(arguments) failed") }
    }

    @Test func upload_AcceptsHEICAndPNG_ByTheirBytes_UnderTheirOwnExtensionAndType() throws {
        let (heic, png) = try Self.fixtures()
        let server = try TestServer(workers: 1, configure: UploadTests.smallDerivatives)
        defer { server.stop() }
        for (bytes, ext, type) in [(heic, "heic", "image/heic"), (png, "png", "image/png")] {
            let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            // Named and typed as a JPEG: the bytes decide.
            let file = try server.request(
                "POST", "/parse/files/IMG_0001.jpg", body: Data(bytes), headers: ["Content-Type": "image/jpeg"])
            #expect(file.status == 201, "\(ext): \(file.text)")
            #expect(file.json["name"] as? String == "\(sha).\(ext)")
            #expect((file.json["url"] as? String)?.hasSuffix("/bucket/originals/\(sha).\(ext)") == true)
            let created = try server.json(
                "POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": "\(sha).\(ext)"]])
            let id = try #require(created.json["objectId"] as? String, "\(ext): \(created.text)")
            #expect(try server.waitForProcessing(id) == "ready", "\(ext)")
            let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
            #expect(photo["contentType"] as? String == type)
            #expect(photo["width"] as? Int == 160 && photo["height"] as? Int == 120, "\(ext)")
            #expect(photo["thumbnailWidth"] as? Int == 43 && photo["thumbnailHeight"] as? Int == 32, "\(ext)")
            let original = try server.fetchFile(photo["original"])
            #expect(original.header("Content-Type") == type)
            #expect([UInt8](original.body) == bytes)
            let thumbnail = try server.fetchFile(photo["thumbnail"])
            #expect(thumbnail.header("Content-Type") == "image/jpeg")
            let info = try ImageProbe.probe(bytes: [UInt8](thumbnail.body))
            #expect(info.format == .jpeg && info.width == 43 && info.height == 32)
        }
    }

    @Test func import_WalksHEICAndPNGFiles_AndStoresThemAsWhatTheyAre() throws {
        let (heic, png) = try Self.fixtures()
        let folder = NSTemporaryDirectory() + "galleryd-import-formats-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data(heic).write(to: URL(fileURLWithPath: folder + "/IMG_0001.HEIC"))
        try Data(png).write(to: URL(fileURLWithPath: folder + "/screenshot.webp"))  // mislabelled: a PNG
        try Data("ignored\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        let found = ImportService.findImages(in: [folder]).files.map { ($0 as NSString).lastPathComponent }
        #expect(found == ["IMG_0001.HEIC", "screenshot.webp"])
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let service = ImportService(
            uploads: server.application.uploads, spoolDirectory: server.application.store.spoolDirectory)
        for name in found {
            guard case .imported = service.importFile(folder + "/" + name) else {
                Issue.record("\(name) was not imported")
                continue
            }
        }
        #expect(Set(server.blobFiles(under: "originals").map { ($0 as NSString).pathExtension }) == ["heic", "png"])
        #expect(
            try server.scalar("select count(*)::bigint from photos where content_type in ('image/heic', 'image/png')")
                == 2)
    }

    @Test(arguments: ["heic", "png"])
    func upload_IsRefusedWith130_AndLeavesNothing_WhenTheFileIsCutOff(_ ext: String) throws {
        let (heic, png) = try Self.fixtures()
        let bytes = ext == "heic" ? heic : png
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let r = try server.request(
            "POST", "/parse/files/cut.\(ext)", body: Data(bytes.prefix(bytes.count - 50)),
            headers: ["Content-Type": "application/octet-stream"])
        #expect(r.status == 400)
        #expect(r.json["code"] as? Int == 130, "\(r.text)")
        #expect((r.json["error"] as? String)?.contains("truncated") == true, "\(r.text)")
        try server.expectNothingStored(ext)
    }
}
