import BlobStore
import Crypto
import Foundation
import GalleryTestSupport
import HTTPServer
import Logging
import Testing

@testable import GalleryApp

/// `asset_delivery = "proxy"` streams from S3 (moto): the first bytes reach the client before the
/// object is read, a client that stops reading stops the reads from the store, the client's Range
/// reaches the store, conditionals are answered like local files, a client that goes away leaves
/// no connection behind, and the store dying mid-body closes the client's connection.
@Suite(.enabled(if: S3TestEnvironment.isProvided, S3TestEnvironment.skipReason), .serialized, .timeLimit(.minutes(3)))
struct S3ProxyStreamingTests {
    /// An instance with `storage = "s3"`, proxy delivery, on its own database.
    private final class Instance {
        let application: GalleryApplication
        let spool: String
        let database: (name: String, url: String, admin: String)
        let lock: ClusterLockHold

        init(prefix: String, endpoint: String? = nil, bufferBytes: Int = 256 * 1024, maxStreams: Int = 64) throws {
            lock = try ClusterLock.acquire()
            database = try TestServer.makeDatabase()
            spool = NSTemporaryDirectory() + "galleryd-s3-proxy-" + UUID().uuidString
            var configuration = GalleryConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.databaseURL = database.url
            configuration.storageDir = spool
            configuration.masterKey = TestServer.masterKey
            // These tests fetch keys by path: a public bucket (SignedAssetURLTests test the private one).
            configuration.urlSigningKey = TestServer.urlSigningKey
            configuration.bucketPublic = true
            configuration.workers = 0
            configuration.poolSize = 2
            configuration.drainTimeoutMs = 2000
            configuration.assetDelivery = "proxy"
            configuration.assetProxyBufferBytes = bufferBytes
            configuration.assetProxyStreams = maxStreams
            S3TestEnvironment.configure(&configuration, prefix: prefix)
            if let endpoint { configuration.s3Endpoint = endpoint }
            var logger = Logger(label: "galleryd.test")
            logger.logLevel = .critical
            application = try GalleryApplication(configuration: configuration, logger: logger)
            try application.start()
        }

        var port: Int { application.port }
        var proxy: BucketProxy { application.bucketProxy! }
        var transport: S3SocketTransport { (application.blobs as! S3BlobStore).client.transport as! S3SocketTransport }

        func stop() {
            application.shutdown()
            application.wait()
            try? FileManager.default.removeItem(atPath: spool)
            TestServer.dropDatabase(database.name, admin: database.admin)
            lock.release()
        }

        /// Waits (up to 10 s) until no download pumps and every S3 connection is back in the pool
        /// or closed; returns whether that happened.
        func settles() -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                if proxy.activeStreams == 0 && transport.connectionsOpen == transport.idleConnections { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }
    }

    /// `count` random bytes, stored in the bucket under an original's key named by their SHA-256.
    private static func storeObject(_ instance: Instance, count: Int) throws -> (key: String, bytes: [UInt8]) {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for i in 0..<words.count { words[i] = generator.next() }
        }
        let sha = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let key = "originals/\(sha).jpg"
        try instance.application.blobs.put(try BlobKey(key), bytes: bytes)
        return (key, bytes)
    }

    private static func get(_ port: Int, _ path: String, method: String = "GET", headers: String = "") throws
        -> RawHTTPResponse
    {
        try RawHTTPClient.exchange(
            port: port, head: "\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(headers)Connection: close\r\n\r\n")
    }

    private static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test func proxy_SendsTheFirstBytesBeforeTheObjectIsRead_AndReadsNoFasterThanASlowClient() throws {
        let instance = try Instance(prefix: "stream-\(UUID().uuidString.prefix(8))/")
        defer { instance.stop() }
        let size = 20 << 20
        let (key, bytes) = try Self.storeObject(instance, count: size)
        let before = instance.proxy.bytesFromStore

        // A client with a small receive buffer reads the head and 64 KiB, then stops reading.
        let client = try RawHTTPClient(port: instance.port, receiveBuffer: 32 * 1024, receiveTimeout: 30)
        client.send("GET /bucket/\(key) HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readHead()
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == String(size))
        #expect(head.headers["Content-Type"] == "image/jpeg")
        #expect(head.headers["ETag"]?.isEmpty == false)
        let first = try client.readBytes(64 * 1024)
        #expect(first == Array(bytes[0..<64 * 1024]))
        let atFirstBytes = instance.proxy.bytesFromStore - before
        #expect(atFirstBytes < Int64(size), "the whole object was read before the first bytes went out")

        // While the client reads nothing, the pump stops at the stream's buffer plus the kernel's
        // socket buffers (a few MiB on loopback), far short of the 20 MiB.
        Thread.sleep(forTimeInterval: 1.5)
        let stalled = instance.proxy.bytesFromStore - before
        Thread.sleep(forTimeInterval: 0.5)
        let stillStalled = instance.proxy.bytesFromStore - before
        #expect(stalled == stillStalled, "the pump kept reading while the client read nothing")
        #expect(stalled < 8 << 20, "read \(stalled) bytes from the store for a client that took 64 KiB")
        #expect(instance.proxy.activeStreams == 1)

        // The rest arrives whole and in order.
        let rest = try client.readBytes(size - first.count)
        #expect(Self.sha256(first + rest) == Self.sha256(bytes))
        #expect(instance.proxy.bytesFromStore - before == Int64(size))
        // The connection stays usable (keep-alive) after a streamed body.
        client.send("GET /bucket/\(key) HTTP/1.1\r\nHost: x\r\nRange: bytes=0-3\r\n\r\n")
        let again = try client.readResponse()
        #expect(again.status == 206)
        #expect(again.body == Array(bytes[0...3]))
        #expect(instance.settles())
    }

    @Test func proxy_ForwardsRange_AndAnswersConditionalsAndHEADLikeLocalFiles() throws {
        let instance = try Instance(prefix: "range-\(UUID().uuidString.prefix(8))/")
        defer { instance.stop() }
        let size = 4 << 20
        let (key, bytes) = try Self.storeObject(instance, count: size)
        let path = "/bucket/\(key)"

        // The range is asked of the store: only its bytes are read.
        var before = instance.proxy.bytesFromStore
        let range = try Self.get(instance.port, path, headers: "Range: bytes=1000-1999\r\n")
        #expect(range.status == 206)
        #expect(range.headers["Content-Range"] == "bytes 1000-1999/\(size)")
        #expect(range.headers["Content-Length"] == "1000")
        #expect(range.body == Array(bytes[1000...1999]))
        #expect(instance.proxy.bytesFromStore - before == 1000)
        let suffix = try Self.get(instance.port, path, headers: "Range: bytes=-500\r\n")
        #expect(suffix.status == 206)
        #expect(suffix.headers["Content-Range"] == "bytes \(size - 500)-\(size - 1)/\(size)")
        #expect(suffix.body == Array(bytes[(size - 500)...]))
        let open = try Self.get(instance.port, path, headers: "Range: bytes=\(size - 10)-\r\n")
        #expect(open.status == 206)
        #expect(open.body == Array(bytes[(size - 10)...]))
        // Several ranges, or another unit: the whole object, as for local files (RFC 9110 §14.2).
        let several = try Self.get(instance.port, path, headers: "Range: bytes=0-1,5-6\r\n")
        #expect(several.status == 200)
        #expect(several.body.count == size)
        let unsatisfiable = try Self.get(instance.port, path, headers: "Range: bytes=\(size + 10)-\r\n")
        #expect(unsatisfiable.status == 416)
        #expect(unsatisfiable.headers["Content-Range"] == "bytes */\(size)")
        #expect(String(decoding: unsatisfiable.body, as: UTF8.self).contains("<Code>InvalidRange</Code>"))

        // Conditionals: a HEAD decides, no body is read for a 304 or 412.
        let whole = try Self.get(instance.port, path, method: "HEAD")
        #expect(whole.status == 200)
        #expect(whole.headers["Content-Length"] == String(size))
        #expect(whole.body.isEmpty)
        let etag = try #require(whole.headers["ETag"])
        before = instance.proxy.bytesFromStore
        #expect(try Self.get(instance.port, path, headers: "If-None-Match: \(etag)\r\n").status == 304)
        #expect(try Self.get(instance.port, path, headers: "If-None-Match: \"other\", W/\(etag)\r\n").status == 304)
        #expect(try Self.get(instance.port, path, headers: "If-None-Match: *\r\n").status == 304)
        let notModified = try Self.get(instance.port, path, headers: "If-None-Match: \(etag)\r\n")
        #expect(notModified.headers["ETag"] == etag)
        let failed = try Self.get(instance.port, path, headers: "If-Match: \"not-it\"\r\n")
        #expect(failed.status == 412)
        #expect(String(decoding: failed.body, as: UTF8.self).contains("<Code>PreconditionFailed</Code>"))
        #expect(instance.proxy.bytesFromStore == before)
        // A stale If-None-Match gets the body; If-Range with the current tag gets the range, a stale one the whole.
        let changed = try Self.get(instance.port, path, headers: "If-None-Match: \"stale\"\r\n")
        #expect(changed.status == 200)
        #expect(changed.body == bytes)
        let ifRange = try Self.get(instance.port, path, headers: "If-Range: \(etag)\r\nRange: bytes=10-19\r\n")
        #expect(ifRange.status == 206)
        #expect(ifRange.body == Array(bytes[10...19]))
        let staleRange = try Self.get(instance.port, path, headers: "If-Range: \"stale\"\r\nRange: bytes=10-19\r\n")
        #expect(staleRange.status == 200)
        #expect(staleRange.body.count == size)
        // A missing key and a bad key, in S3's format.
        let missing = try Self.get(instance.port, "/bucket/originals/nothing.jpg")
        #expect(missing.status == 404)
        #expect(String(decoding: missing.body, as: UTF8.self).contains("<Code>NoSuchKey</Code>"))
        let missingConditional = try Self.get(
            instance.port, "/bucket/originals/nothing.jpg", headers: "If-None-Match: \(etag)\r\n")
        #expect(missingConditional.status == 404)
        #expect(instance.settles())
    }

    @Test func proxy_ClientsGoneMidBody_LeaveNoStreamOrConnectionBehind() throws {
        let instance = try Instance(prefix: "gone-\(UUID().uuidString.prefix(8))/")
        defer { instance.stop() }
        let size = 20 << 20
        let (key, _) = try Self.storeObject(instance, count: size)
        let before = instance.proxy.bytesFromStore
        let openBefore = instance.transport.connectionsOpen

        // Six clients take 100 KiB each and go: three close, three reset.
        for index in 0..<6 {
            let client = try RawHTTPClient(port: instance.port, receiveBuffer: 32 * 1024, receiveTimeout: 30)
            client.send("GET /bucket/\(key) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readHead().status == 200)
            _ = try client.readBytes(100 * 1024)
            if index % 2 == 1 {
                var reset = linger(l_onoff: 1, l_linger: 0)
                setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            }
            // The client is released here: its descriptor closes.
        }
        #expect(
            instance.settles(),
            "streams \(instance.proxy.activeStreams), S3 connections open \(instance.transport.connectionsOpen), idle \(instance.transport.idleConnections)"
        )
        // The pumps stopped reading: far less than six whole objects came from the store.
        #expect(instance.proxy.bytesFromStore - before < Int64(6 * size / 2))
        // Closed S3 connections, not parked half read: what is open now is idle and no more than before plus the pool.
        #expect(instance.transport.connectionsOpen <= openBefore + 16)
        // And the instance still serves the object whole.
        let whole = try Self.get(instance.port, "/bucket/\(key)")
        #expect(whole.status == 200)
        #expect(whole.body.count == size)
        let metrics = try Self.get(
            instance.port, "/metrics", headers: "X-Parse-Master-Key: \(TestServer.masterKey)\r\n")
        let text = String(decoding: metrics.body, as: UTF8.self)
        // Only the metrics request itself is open.
        #expect(
            text.contains("galleryd_http_open_connections 1"),
            "\(text.split(separator: "\n").filter { $0.contains("open_connections") })")
        #expect(text.contains("galleryd_asset_proxy_streams 0"))
    }

    @Test func proxy_AnswersSlowDown_BeyondAssetProxyStreams_AndServesAgainOnceOneEnds() throws {
        let instance = try Instance(prefix: "busy-\(UUID().uuidString.prefix(8))/", maxStreams: 1)
        defer { instance.stop() }
        let size = 8 << 20
        let (key, _) = try Self.storeObject(instance, count: size)
        do {
            // One slow download holds the only stream.
            let slow = try RawHTTPClient(port: instance.port, receiveBuffer: 32 * 1024, receiveTimeout: 30)
            slow.send("GET /bucket/\(key) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try slow.readHead().status == 200)
            let busy = try Self.get(instance.port, "/bucket/\(key)")
            #expect(busy.status == 503)
            #expect(busy.headers["Retry-After"] == "1")
            #expect(String(decoding: busy.body, as: UTF8.self).contains("<Code>SlowDown</Code>"))
            // A revalidation needs no stream: it is answered.
            let etag = try #require(try Self.get(instance.port, "/bucket/\(key)", method: "HEAD").headers["ETag"])
            #expect(try Self.get(instance.port, "/bucket/\(key)", headers: "If-None-Match: \(etag)\r\n").status == 304)
        }
        #expect(instance.settles())
        #expect(try Self.get(instance.port, "/bucket/\(key)").body.count == size)
    }

    @Test func proxy_ObjectStoreDyingMidBody_ClosesTheClientConnection_AndServingGoesOn() throws {
        let endpoint = try #require(URL(string: S3TestEnvironment.value("GALLERYD_TEST_S3_ENDPOINT")!))
        let relay = try CuttingTCPProxy(upstreamHost: endpoint.host ?? "127.0.0.1", upstreamPort: endpoint.port ?? 80)
        defer { relay.stop() }
        let prefix = "dying-\(UUID().uuidString.prefix(8))/"
        let instance = try Instance(prefix: prefix, endpoint: "http://127.0.0.1:\(relay.port)")
        defer { instance.stop() }
        let size = 4 << 20
        let (key, bytes) = try Self.storeObject(instance, count: size)

        // The store's connection breaks after 1 MiB of its answer; the client asked for keep-alive.
        relay.cut(after: 1 << 20)
        let client = try RawHTTPClient(port: instance.port, receiveTimeout: 20)
        client.send("GET /bucket/\(key) HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readHead()
        #expect(head.status == 200)
        #expect(head.headers["Content-Length"] == String(size))
        let (received, closed) = client.readUntilClosed()
        #expect(closed, "the client's connection was left open after the store failed")
        #expect(received.count < size)
        #expect(received == Array(bytes[0..<received.count]))
        #expect(relay.cuts >= 1)
        #expect(instance.settles())

        // Not retried behind the client's back, not cached: with the store healthy again, the next GET is whole.
        relay.cut(after: nil)
        let whole = try Self.get(instance.port, "/bucket/\(key)")
        #expect(whole.status == 200)
        #expect(whole.body == bytes)
    }
}
