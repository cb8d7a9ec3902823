import Foundation
import GalleryTestSupport
import Testing

@testable import GalleryApp
@testable import Imaging

/// HDR photos uploaded (issue #28's "10-bit images", decision 074): a 10-bit PQ HEIC and HLG AVIF
/// become ready photos whose dominant colour is of the tone-mapped pixels; cut off, each is refused
/// with 130 and nothing stored; with its coded data damaged, it is stored and the worker fails or
/// makes it without crashing: the next photo is processed.
@Suite(.serialized) struct UploadHDRTests {
    /// 128×64 of BT.2408's reference white (203 cd/m²), which the tone map puts at 229 grey.
    static func white(_ transfer: HDRFixtures.Transfer, avif: Bool) throws -> [UInt8] {
        try HDRFixtures.file(patches: [(203, 203, 203), (203, 203, 203)], transfer: transfer, avif: avif)
    }

    /// Uploads `bytes` and makes a Photo of it: the upload's answer and the photo's id.
    static func photo(_ bytes: [UInt8], on server: TestServer) throws -> (status: Int, id: String?, text: String) {
        let file = try server.request(
            "POST", "/parse/files/IMG_0001.HEIC", body: Data(bytes), headers: ["Content-Type": "image/heic"])
        guard file.status == 201, let name = file.json["name"] as? String else { return (file.status, nil, file.text) }
        let created = try server.json("POST", "/parse/classes/Photo", ["original": ["__type": "File", "name": name]])
        return (file.status, created.json["objectId"] as? String, created.text)
    }

    @Test(arguments: [(HDRFixtures.Transfer.pq, false), (.hlg, true)])
    func upload_ProcessesHDRPhotos_RefusesThemCutOff_AndSurvivesThemDamaged(
        _ transfer: HDRFixtures.Transfer, avif: Bool
    ) throws {
        let bytes = try Self.white(transfer, avif: avif)
        let server = try TestServer(workers: 1, configure: UploadTests.smallDerivatives)
        defer { server.stop() }

        let whole = try Self.photo(bytes, on: server)
        let id = try #require(whole.id, "\(whole.status) \(whole.text)")
        #expect(try server.waitForProcessing(id) == "ready")
        let photo = try server.request("GET", "/parse/classes/Photo/\(id)").json
        #expect(photo["contentType"] as? String == (avif ? "image/avif" : "image/heic"))
        let hex = try #require((photo["dominantColor"] as? String)?.dropFirst())
        let rgb = stride(from: 0, to: 6, by: 2).map { Int(hex.dropFirst($0).prefix(2), radix: 16) ?? -1 }
        #expect(rgb.allSatisfy { abs($0 - 229) <= 4 }, "\(hex)")

        let cut = try server.request(
            "POST", "/parse/files/cut.heic", body: Data(bytes.prefix(bytes.count - 50)),
            headers: ["Content-Type": "application/octet-stream"])
        #expect(cut.status == 400)
        #expect(cut.json["code"] as? Int == 130, "\(cut.text)")

        // The coded image (the second half of `mdat`, the file's last box) overwritten: whole boxes,
        // so the upload takes it.
        var damaged = bytes
        let mdat = try #require((4..<bytes.count - 4).last { bytes[$0..<$0 + 4].elementsEqual(Array("mdat".utf8)) })
        for i in (mdat + 4 + (bytes.count - mdat - 4) / 2)..<bytes.count { damaged[i] ^= 0x5A }
        let broken = try Self.photo(damaged, on: server)
        let brokenID = try #require(broken.id, "\(broken.status) \(broken.text)")
        #expect(["ready", "failed"].contains(try server.waitForProcessing(brokenID)))
        let next = try Self.photo(try Self.white(transfer, avif: !avif), on: server)
        #expect(try server.waitForProcessing(try #require(next.id)) == "ready", "the worker kept working")
    }
}
