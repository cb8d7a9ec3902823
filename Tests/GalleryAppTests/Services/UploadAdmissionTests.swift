import BlobStore
import Foundation
import Testing

@testable import GalleryApp

/// Uploads that trickle in hold the spool budget by the bytes they sent, not the upload limit, and
/// one user or address cannot hold more than its share of uploads at once.
@Suite(.serialized) struct UploadAdmissionTests {
    /// Opens a chunked upload with `headers` and sends its first KiB, then leaves it open.
    static func trickle(_ server: TestServer, headers: String) throws -> RawHTTPClient {
        let client = try RawHTTPClient(port: server.application.port, receiveTimeout: 30)
        let head =
            "POST /parse/files/slow.jpg HTTP/1.1\r\nHost: t\r\nX-Parse-Application-Id: \(TestServer.appID)\r\n"
            + headers + "Content-Type: image/jpeg\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(client.send(head))
        #expect(client.send("400\r\n" + String(repeating: "x", count: 1024) + "\r\n"))
        return client
    }

    /// A server whose tricklers are not cut off by the body timeouts while a test runs.
    static func patientServer(_ configure: @escaping (inout GalleryConfiguration) -> Void) throws -> TestServer {
        try TestServer(workers: 0, listening: true) {
            $0.bodyTimeoutMs = 60_000
            $0.minBodyRate = 0
            configure(&$0)
        }
    }

    static func waitUntil(_ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(30)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    @Test func reservation_GrowsAQuotaAtATime_AsBytesArrive_AndIsRefusedPastTheBudget() throws {
        let store = try LocalBlobStore(root: NSTemporaryDirectory() + "galleryd-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        var limits = UploadAdmission.Limits(maxSpoolBytes: 10_000, minFreeBytes: 0, maxUploadBytes: 8_000)
        limits.quotaBytes = 1_000
        let admission = UploadAdmission(store: store, limits: limits)
        do {
            // Chunked: the first quota, not the upload limit.
            let first = try admission.admit(contentLength: nil)
            #expect(first.bytes == 1_000 && admission.spoolingBytes == 1_000)
            try first.cover(900)
            #expect(first.bytes == 1_000)
            try first.cover(1_500)
            #expect(first.bytes == 2_500 && admission.spoolingBytes == 2_500)
            // A declared length reserves no more than a quota either.
            let second = try admission.admit(contentLength: 7_000)
            #expect(second.bytes == 1_000 && admission.spoolingBytes == 3_500)
            try second.cover(6_000)
            #expect(second.bytes == 7_000 && admission.spoolingBytes == 9_500)
            // The budget has 500 left: the next quota does not fit, for growth or a new upload.
            #expect(throws: InsufficientStorage.self) { try first.cover(2_600) }
            #expect(throws: InsufficientStorage.self) { _ = try admission.admit(contentLength: nil) }
            #expect(admission.spoolingBytes == 9_500)
            withExtendedLifetime((first, second)) {}
        }
        #expect(admission.spoolingBytes == 0)
        // Alone, an upload grows to the upload limit whatever the budget.
        var small = limits
        small.maxSpoolBytes = 1_000
        let lone = UploadAdmission(store: store, limits: small)
        let alone = try lone.admit(contentLength: nil)
        try alone.cover(8_000)
        #expect(alone.bytes == 8_000 && lone.spoolingBytes == 8_000)
    }

    @Test func caps_CountUploadsAtOncePerUserAndPerAddress_UntilTheyAreDone() throws {
        let store = try LocalBlobStore(root: NSTemporaryDirectory() + "galleryd-spool-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(atPath: store.root) }
        var limits = UploadAdmission.Limits(maxSpoolBytes: 1 << 30, minFreeBytes: 0, maxUploadBytes: 1 << 20)
        limits.maxPerUser = 2
        limits.maxPerAddress = 3
        let admission = UploadAdmission(store: store, limits: limits)
        let alice = UploadAdmission.Sender(user: "alice", address: "10.0.0.1")
        let bob = UploadAdmission.Sender(user: "bob", address: "10.0.0.1")
        do {
            let held = [
                try admission.admit(contentLength: 10, from: alice),
                try admission.admit(contentLength: 10, from: alice),
            ]
            #expect(throws: TooManyUploads.self) { _ = try admission.admit(contentLength: 10, from: alice) }
            let third = try admission.admit(contentLength: 10, from: bob)
            // Bob has one, but the address has three.
            #expect(throws: TooManyUploads.self) { _ = try admission.admit(contentLength: 10, from: bob) }
            // Another address, and the master key's sender (no keys), are not counted with them.
            _ = try admission.admit(contentLength: 10, from: UploadAdmission.Sender(user: "carol", address: "10.0.0.2"))
            _ = try admission.admit(contentLength: 10, from: UploadAdmission.Sender(user: nil, address: nil))
            withExtendedLifetime((held, third)) {}
        }
        // Done: the slots are free again.
        let again = try admission.admit(contentLength: 10, from: alice)
        withExtendedLifetime(again) {}
    }

    @Test func thirtyTricklingUploads_DoNotMakeAnotherUsersUpload507() throws {
        let server = try Self.patientServer {
            $0.maxUploadsPerUser = 0
            $0.maxUploadsPerAddress = 0
        }
        defer { server.stop() }
        let mallory = try server.makeUser("mallory")
        let alice = try server.makeUser("alice")
        let tricklers = try (0..<30).map { _ in
            try Self.trickle(server, headers: "X-Parse-Session-Token: \(mallory.token)\r\n")
        }
        let admission = server.application.uploadAdmission
        Self.waitUntil { admission.spoolingBytes >= 30 << 20 }
        // Each holds its first MiB, not the 100 MiB upload limit (30 of which pass the 2 GiB budget).
        #expect(admission.spoolingBytes == 30 << 20)
        let upload = try server.request(
            "POST", "/parse/files/mine.jpg", body: Data(try TestJPEG.make(width: 40, height: 40, seed: 90)),
            headers: alice.headers.merging(["Content-Type": "image/jpeg"]) { a, _ in a })
        #expect(upload.status == 201, "\(upload.text)")
        withExtendedLifetime(tricklers) {}
    }

    @Test func uploadsBeyondTheCaps_Get429WithRetryAfter_AtTheHead() throws {
        let server = try Self.patientServer {
            $0.maxUploadsPerUser = 3
            $0.maxUploadsPerAddress = 5
        }
        defer { server.stop() }
        let mallory = try server.makeUser("mallory")
        let trudy = try server.makeUser("trudy")
        let alice = try server.makeUser("alice")
        let malloryHeader = "X-Parse-Session-Token: \(mallory.token)\r\n"
        var held = try (0..<3).map { _ in try Self.trickle(server, headers: malloryHeader) }
        let admission = server.application.uploadAdmission
        Self.waitUntil { admission.spoolingBytes >= 3 << 20 }
        // The user's fourth: 429, Parse 155, Retry-After, before any of its body is read.
        let fourth = try Self.trickle(server, headers: malloryHeader).readResponse()
        #expect(fourth.status == 429 && fourth.header("Retry-After") == "2", "\(fourth.text)")
        #expect(UploadStorageTests.json(fourth)["code"] as? Int == 155)
        // Another user from the same address fits twice more, then the address is full.
        held += try (0..<2).map { _ in try Self.trickle(server, headers: "X-Parse-Session-Token: \(trudy.token)\r\n") }
        Self.waitUntil { admission.spoolingBytes >= 5 << 20 }
        let sixth = try server.request(
            "POST", "/parse/files/mine.jpg", body: Data(try TestJPEG.make(width: 40, height: 40, seed: 91)),
            headers: alice.headers.merging(["Content-Type": "image/jpeg"]) { a, _ in a })
        #expect(sixth.status == 429 && sixth.header("Retry-After") != nil, "\(sixth.text)")
        // The master key is exempt, and once the tricklers go, everyone uploads again.
        let master = try server.request(
            "POST", "/parse/files/master.jpg", body: Data(try TestJPEG.make(width: 40, height: 40, seed: 92)),
            headers: ["X-Parse-Master-Key": TestServer.masterKey, "Content-Type": "image/jpeg"])
        #expect(master.status == 201, "\(master.text)")
        held.removeAll()
        Self.waitUntil { admission.spoolingBytes == 0 }
        let after = try server.request(
            "POST", "/parse/files/mine.jpg", body: Data(try TestJPEG.make(width: 40, height: 40, seed: 93)),
            headers: alice.headers.merging(["Content-Type": "image/jpeg"]) { a, _ in a })
        #expect(after.status == 201, "\(after.text)")
    }
}
