import Crypto
import Foundation
import Testing

@testable import GalleryApp
@testable import Imaging

#if canImport(Glibc)
    import Glibc
#endif

/// Uploads of the formats phones make besides JPEG (issue #28): recognised by their bytes whatever
/// the name and `Content-Type`, stored and served byte for byte under their own extension and
/// media type, with progressive JPEG derivatives; cut-off files and images over `max_pixels`
/// (a PNG bomb's header) refused with 130 and nothing stored.
@Suite(.serialized) struct UploadFormatTests {
    /// The same 160×120 photo as HEIC, PNG (decoded from the HEIC by `heif-convert`), WebP (`cwebp`)
    /// and AVIF (`heif-enc -A`), by extension (libheif-examples and webp, which `scripts/deps.sh`
    /// installs).
    static func allFormats() throws -> [String: [UInt8]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "upload-formats-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try Data(try TestJPEG.make(width: 160, height: 120, seed: 28)).write(to: URL(fileURLWithPath: path("in.jpg")))
        try run(["heif-enc", "-q", "90", "-o", path("out.heic"), path("in.jpg")])
        try run(["heif-convert", path("out.heic"), path("out.png")])
        try run(["cwebp", "-quiet", "-q", "90", path("out.png"), "-o", path("out.webp")])
        try run(["heif-enc", "-A", "-q", "90", "-o", path("out.avif"), path("in.jpg")])
        var files: [String: [UInt8]] = [:]
        for ext in ["heic", "png", "webp", "avif"] {
            files[ext] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path("out.\(ext)"))))
        }
        return files
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

    @Test func upload_AcceptsHEICPNGWebPAndAVIF_ByTheirBytes_UnderTheirOwnExtensionAndType() throws {
        let files = try Self.allFormats()
        let server = try TestServer(workers: 1, configure: UploadTests.smallDerivatives)
        defer { server.stop() }
        let types = ["heic": "image/heic", "png": "image/png", "webp": "image/webp", "avif": "image/avif"]
        for (ext, type) in types.sorted(by: { $0.key < $1.key }) {
            let bytes = files[ext]!
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
            #expect(info.isProgressive, "\(ext): the thumbnail is a progressive JPEG")
            let preview = try ImageProbe.probe(bytes: [UInt8](try server.fetchFile(photo["preview"]).body))
            #expect(preview.format == .jpeg && preview.isProgressive && preview.width == 96, "\(ext)")
        }
    }

    @Test func import_WalksEveryFormatsFiles_StoresThemAsWhatTheyAre_AndProcessesThem() throws {
        let files = try Self.allFormats()
        let folder = NSTemporaryDirectory() + "galleryd-import-formats-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A camera's HEIF (Canon, Sony: `.HIF`) is found by its bytes, as the upload recognises it.
        try Data(files["heic"]!).write(to: URL(fileURLWithPath: folder + "/DSC00001.HIF"))
        try Data(files["png"]!).write(to: URL(fileURLWithPath: folder + "/screenshot.webp"))  // mislabelled: a PNG
        try Data(files["webp"]!).write(to: URL(fileURLWithPath: folder + "/shared.jpg"))  // mislabelled: a WebP
        try Data(files["avif"]!).write(to: URL(fileURLWithPath: folder + "/pixel.heif"))  // mislabelled: an AVIF
        try Data("ignored\n".utf8).write(to: URL(fileURLWithPath: folder + "/notes.txt"))
        // A Live Photo's movie (an ISO BMFF `ftyp qt`, not an image) and a named pipe, which the
        // walk must not open and block on: both skipped.
        let movie: [UInt8] =
            [0, 0, 0, 0x14] + Array("ftypqt  ".utf8) + [0, 0, 2, 0] + Array("qt  ".utf8) + [0, 0, 0, 8]
        try Data(movie + Array("wide".utf8)).write(to: URL(fileURLWithPath: folder + "/IMG_0001.MOV"))
        #expect(mkfifo(folder + "/pipe", 0o600) == 0)
        let found = ImportService.findImages(in: [folder]).files.map { ($0 as NSString).lastPathComponent }
        #expect(found == ["DSC00001.HIF", "pixel.heif", "screenshot.webp", "shared.jpg"])
        // The `galleryd import` command itself, processing what it imported.
        let server = try TestServer(workers: 0)
        defer { server.stop() }
        let run = try ImportTests.run(["import", "--process", folder], server: server)
        #expect(run.status == 0, "\(run.out)\n\(run.err)")
        #expect(run.out.contains("4 imported, 0 duplicate(s) skipped, 0 failed"), "\(run.out)")
        #expect(run.out.contains("processed 4 photo(s)"), "\(run.out)")
        #expect(
            Set(server.blobFiles(under: "originals").map { ($0 as NSString).pathExtension })
                == ["heic", "png", "webp", "avif"])
        #expect(
            try server.scalar(
                "select count(*)::bigint from photos where status = 'ready' and width = 160 and height = 120"
                    + " and content_type in ('image/heic', 'image/png', 'image/webp', 'image/avif')"
            ) == 4)
    }

    @Test(arguments: ["heic", "png", "webp", "avif"])
    func upload_IsRefusedWith130_AndLeavesNothing_WhenTheFileIsCutOff(_ ext: String) throws {
        let bytes = try Self.allFormats()[ext]!
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

    /// A whole file whose header is broken is refused at upload, as a JPEG's is, not stored and then
    /// failed by the worker: a PNG whose IHDR fails its CRC or pairs colour type 2 with bit depth 4,
    /// a WebP whose VP8 frame lacks its start code, a HEIC and an AVIF whose handler is not `pict`.
    @Test func upload_IsRefusedWith130_AndLeavesNothing_WhenTheHeaderIsCorrupt() throws {
        let files = try Self.allFormats()
        func replacing(_ bytes: [UInt8], _ old: String, _ new: String) throws -> [UInt8] {
            let (o, n) = (Array(old.utf8), Array(new.utf8))
            let at = try #require((0...(bytes.count - o.count)).first { Array(bytes[$0..<$0 + o.count]) == o })
            return Array(bytes[..<at]) + n + Array(bytes[(at + o.count)...])
        }
        var crc = files["png"]!
        crc[29] ^= 0x01  // the IHDR chunk's CRC (signature 8, length and type 8, data 13)
        var depth = files["png"]!
        depth[24] = 4  // bit depth 4 with colour type 2 (RGB)
        depth.replaceSubrange(29..<33, with: Self.crc(Array("IHDR".utf8) + depth[16..<29]))
        var startCode = files["webp"]!
        let vp8 = try #require((12..<startCode.count - 4).first { Array(startCode[$0..<$0 + 4]) == Array("VP8 ".utf8) })
        startCode[vp8 + 8 + 3] ^= 0xFF  // 9D 01 2A after the frame tag (RFC 6386 §9.1)
        let cases: [(String, [UInt8])] = [
            ("png CRC", crc), ("png depth", depth), ("webp", startCode),
            ("heic", try replacing(files["heic"]!, "pict", "vide")),
            ("avif", try replacing(files["avif"]!, "pict", "vide")),
        ]
        for (label, bytes) in cases {
            let server = try TestServer(workers: 0)  // one each: a stored file must not fail the next case
            defer { server.stop() }
            let r = try server.request(
                "POST", "/parse/files/photo", body: Data(bytes), headers: ["Content-Type": "application/octet-stream"])
            #expect(r.status == 400, "\(label)")
            #expect(r.json["code"] as? Int == 130, "\(label): \(r.text)")
            try server.expectNothingStored(label)
        }
    }

    /// The PNG CRC of `bytes` (type and data), big-endian (PNG spec Annex D).
    static func crc(_ bytes: [UInt8]) -> [UInt8] {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return (0..<4).map { UInt8(truncatingIfNeeded: ~crc >> (24 - 8 * $0)) }
    }

    /// `max_pixels` is checked on the header at upload, whatever the format: a PNG bomb (a
    /// 60000×60000 IHDR in a few hundred bytes) with the default limit, and each format's
    /// 160×120 photo under a limit one pixel short.
    @Test func upload_IsRefusedWith130_AndLeavesNothing_WhenTheHeaderDeclaresMoreThanMaxPixels() throws {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            var crc: UInt32 = 0xFFFF_FFFF  // PNG spec Annex D
            for byte in body {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            return be32(data.count) + body + be32(Int(~crc))
        }
        func be32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
        let bomb =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", be32(60000) + be32(60000) + [8, 2, 0, 0, 0])
            + chunk("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]) + chunk("IEND", [])
        var cases: [(label: String, bytes: [UInt8], size: String, maxPixels: Int?)] = [
            ("PNG bomb", bomb, "60000x60000", nil)
        ]
        for (ext, bytes) in try Self.allFormats().sorted(by: { $0.key < $1.key }) {
            cases.append((ext, bytes, "160x120", 160 * 120 - 1))
        }
        for item in cases {
            let server = try TestServer(workers: 0) { configuration in
                if let limit = item.maxPixels { configuration.maxPixels = limit }
            }
            defer { server.stop() }
            let r = try server.request(
                "POST", "/parse/files/photo.jpg", body: Data(item.bytes), headers: ["Content-Type": "image/jpeg"])
            #expect(r.status == 400, "\(item.label)")
            #expect(r.json["code"] as? Int == 130, "\(item.label): \(r.text)")
            #expect((r.json["error"] as? String)?.contains(item.size) == true, "\(item.label): \(r.text)")
            try server.expectNothingStored(item.label)
        }
    }
}
