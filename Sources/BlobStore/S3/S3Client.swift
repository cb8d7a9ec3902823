import Crypto
import Foundation
import Synchronization

/// The S3 REST calls galleryd needs, on object keys as plain strings (any UTF-8): signing with
/// `S3Signer`, retries per `S3RetryPolicy`, S3 XML errors turned into `BlobStoreError.remote`.
/// `S3BlobStore` builds on it; tests use it directly for keys a `BlobKey` would refuse.
public final class S3Client: Sendable {
    /// The bucket and credentials.
    public let configuration: S3Configuration
    /// The HTTP client underneath.
    public let transport: S3Transport
    private let signer: S3Signer
    private let retried = Atomic<Int>(0)

    /// A client; the transport defaults to `S3SocketTransport` for `http:` endpoints and
    /// `S3URLSessionTransport` for `https:` (see docs/decisions/025-s3-object-storage.md).
    public init(configuration: S3Configuration, transport: S3Transport? = nil) {
        self.configuration = configuration
        self.signer = S3Signer(
            accessKeyId: configuration.accessKeyId, secretAccessKey: configuration.secretAccessKey,
            region: configuration.region)
        if let transport {
            self.transport = transport
        } else if configuration.endpoint.scheme == "http" {
            self.transport = S3SocketTransport(
                host: configuration.endpoint.host ?? "127.0.0.1", port: configuration.endpoint.port ?? 80,
                timeout: configuration.retry.timeout)
        } else {
            self.transport = S3URLSessionTransport(
                endpoint: configuration.endpoint, timeout: configuration.retry.timeout)
        }
    }

    /// Requests sent again after a retryable failure, since start (for metrics and tests).
    public var retries: Int {
        retried.load(ordering: .relaxed)
    }

    // MARK: Objects

    /// PUT of a whole object; `payloadHash` is the body's SHA-256 (hex), which S3 checks.
    /// Returns the ETag.
    @discardableResult
    public func putObject(
        _ key: String, body: S3HTTPRequest.Body, payloadHash: String, contentType: String = "application/octet-stream"
    ) throws -> String {
        let response = try perform(
            S3HTTPRequest(method: "PUT", path: path(key), headers: [("content-type", contentType)], body: body),
            payloadHash: payloadHash, operation: "put", key: key)
        return response.header("etag") ?? ""
    }

    /// GET of an object (or of `range`, an RFC 9110 `bytes=` range), each body chunk to `sink`.
    /// Returns the response head, or nil when the key does not exist.
    public func getObject(
        _ key: String, range: String? = nil, ifNoneMatch: String? = nil, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse? {
        var headers: [(String, String)] = []
        if let range { headers.append(("range", range)) }
        if let ifNoneMatch { headers.append(("if-none-match", ifNoneMatch)) }
        do {
            return try perform(
                S3HTTPRequest(method: "GET", path: path(key), headers: headers), payloadHash: S3Signer.emptyPayloadHash,
                operation: "get", key: key, accept: [304], sink: sink)
        } catch BlobStoreError.remote(_, _, 404, _, _) {
            return nil
        }
    }

    /// GET (or HEAD) of an object for a proxy: `headers` (e.g. `range`, `if-match`) go along,
    /// `head` gets a 2xx answer's head before its body streams to `sink`, and a 304, 412 or 416 is
    /// returned rather than thrown. Throws `BlobStoreError.notFound` when the key does not exist.
    /// Once body bytes went to `sink`, a failure is thrown, never retried (the sink holds a part).
    public func streamObject(
        _ key: String, method: String = "GET", headers: [(String, String)], head: (S3HTTPResponse) throws -> Void,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        do {
            return try perform(
                S3HTTPRequest(method: method, path: path(key), headers: headers),
                payloadHash: S3Signer.emptyPayloadHash,
                operation: method == "HEAD" ? "head" : "get", key: key, accept: [304, 412, 416], head: head, sink: sink)
        } catch BlobStoreError.remote(_, _, 404, _, _) {
            throw BlobStoreError.notFound(key)
        }
    }

    /// Lists at most one key of the bucket (ListObjectsV2): proves in one request that the endpoint
    /// answers, the credentials are accepted and the bucket exists and may be listed. Throws the
    /// store's answer (`BlobStoreError.remote`: `InvalidAccessKeyId`, `SignatureDoesNotMatch`,
    /// `NoSuchBucket`, `AccessDenied` …) or `.unavailable`.
    public func checkBucket() throws {
        _ = try perform(
            S3HTTPRequest(
                method: "GET", path: path(nil),
                query: [("list-type", "2"), ("max-keys", "1"), ("prefix", configuration.prefix)]),
            payloadHash: S3Signer.emptyPayloadHash, operation: "list", key: configuration.bucket)
    }

    /// GET of a whole object into memory, or nil when absent.
    public func getObjectBytes(_ key: String, range: String? = nil) throws -> [UInt8]? {
        var bytes = [UInt8]()
        guard try getObject(key, range: range, sink: { bytes.append(contentsOf: $0) }) != nil else { return nil }
        return bytes
    }

    /// HEAD of an object: its response head, or nil when absent.
    public func headObject(_ key: String) throws -> S3HTTPResponse? {
        do {
            return try perform(
                S3HTTPRequest(method: "HEAD", path: path(key)), payloadHash: S3Signer.emptyPayloadHash,
                operation: "head", key: key)
        } catch BlobStoreError.remote(_, _, 404, _, _) {
            return nil
        }
    }

    /// DELETE of an object (S3 answers 204 whether or not it existed).
    public func deleteObject(_ key: String) throws {
        _ = try perform(
            S3HTTPRequest(method: "DELETE", path: path(key)), payloadHash: S3Signer.emptyPayloadHash,
            operation: "delete", key: key)
    }

    /// DeleteObjects (`POST ?delete`), at most 1000 keys per request: returns the keys the store
    /// refused to delete, with its error code.
    @discardableResult
    public func deleteObjects(_ keys: [String]) throws -> [String: String] {
        var failures: [String: String] = [:]
        var index = 0
        while index < keys.count {
            let batch = keys[index..<min(index + 1000, keys.count)]
            index += batch.count
            var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>"
            for key in batch { xml += "<Object><Key>\(XMLText.escaped(configuration.prefix + key))</Key></Object>" }
            xml += "</Delete>"
            let body = Array(xml.utf8)
            let md5 = Data(Insecure.MD5.hash(data: body)).base64EncodedString()
            var answer = [UInt8]()
            _ = try perform(
                S3HTTPRequest(
                    method: "POST", path: path(nil), query: [("delete", "")],
                    headers: [("content-md5", md5), ("content-type", "application/xml")], body: .bytes(body)),
                payloadHash: Self.sha256Hex(body), operation: "delete-objects", key: configuration.bucket,
                sink: { answer.append(contentsOf: $0) })
            let text = String(decoding: answer, as: UTF8.self)
            for error in S3XML.elements("Error", in: text) {
                if let key = S3XML.value("Key", in: error) {
                    failures[
                        String(key.dropFirst(key.hasPrefix(configuration.prefix) ? configuration.prefix.count : 0))] =
                        S3XML.value("Code", in: error) ?? ""
                }
            }
        }
        return failures
    }

    /// ListObjectsV2 under `prefix` (after the configured prefix), every page: each key (without the
    /// configured prefix) with its last modification time.
    public func listObjects(prefix: String) throws -> [(key: String, modified: Date)] {
        var found: [(key: String, modified: Date)] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", configuration.prefix + prefix)]
            if let token { query.append(("continuation-token", token)) }
            var answer = [UInt8]()
            _ = try perform(
                S3HTTPRequest(method: "GET", path: path(nil), query: query), payloadHash: S3Signer.emptyPayloadHash,
                operation: "list", key: configuration.bucket, sink: { answer.append(contentsOf: $0) })
            let text = String(decoding: answer, as: UTF8.self)
            for object in S3XML.elements("Contents", in: text) {
                guard let key = S3XML.value("Key", in: object), key.hasPrefix(configuration.prefix) else { continue }
                let stamp = S3XML.value("LastModified", in: object) ?? ""
                let modified = Self.isoFractional.date(from: stamp) ?? Self.iso.date(from: stamp) ?? Date()
                found.append((String(key.dropFirst(configuration.prefix.count)), modified))
            }
            token =
                S3XML.value("IsTruncated", in: text) == "true" ? S3XML.value("NextContinuationToken", in: text) : nil
        } while token != nil
        return found
    }

    nonisolated(unsafe) static let isoFractional: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()
    nonisolated(unsafe) static let iso = ISO8601DateFormatter()

    /// A presigned URL for `method` on `key`, valid for `expires` seconds.
    public func presignedURL(method: String = "GET", _ key: String, expires: Int) -> URL {
        let query = signer.presignedQuery(
            method: method, host: configuration.hostHeader, path: path(key), expires: expires)
        var components = URLComponents()
        components.scheme = configuration.endpoint.scheme
        components.host =
            configuration.pathStyle
            ? configuration.endpoint.host : configuration.bucket + "." + (configuration.endpoint.host ?? "")
        components.port = configuration.endpoint.port
        components.percentEncodedPath = S3Signer.encodePath(path(key))
        components.percentEncodedQuery = query.map {
            S3Signer.encode($0.0, keepSlash: false) + "=" + S3Signer.encode($0.1, keepSlash: false)
        }.joined(separator: "&")
        return components.url!
    }

    // MARK: Multipart upload

    /// CreateMultipartUpload: returns the upload id.
    public func createMultipartUpload(_ key: String, contentType: String = "application/octet-stream") throws -> String
    {
        var answer = [UInt8]()
        _ = try perform(
            S3HTTPRequest(
                method: "POST", path: path(key), query: [("uploads", "")], headers: [("content-type", contentType)]),
            payloadHash: S3Signer.emptyPayloadHash, operation: "create-multipart", key: key,
            sink: { answer.append(contentsOf: $0) })
        guard let id = S3XML.value("UploadId", in: String(decoding: answer, as: UTF8.self)) else {
            throw BlobStoreError.remote(
                operation: "create-multipart", key: key, status: 200, code: "MalformedAnswer", message: "no UploadId")
        }
        return id
    }

    /// UploadPart: returns the part's ETag.
    public func uploadPart(_ key: String, uploadId: String, number: Int, body: S3HTTPRequest.Body, payloadHash: String)
        throws -> String
    {
        let response = try perform(
            S3HTTPRequest(
                method: "PUT", path: path(key), query: [("partNumber", String(number)), ("uploadId", uploadId)],
                body: body),
            payloadHash: payloadHash, operation: "upload-part", key: key)
        return response.header("etag") ?? ""
    }

    /// CompleteMultipartUpload with the parts' ETags in order; returns the object's ETag.
    @discardableResult
    public func completeMultipartUpload(_ key: String, uploadId: String, partETags: [String]) throws -> String {
        var xml = "<CompleteMultipartUpload>"
        for (index, etag) in partETags.enumerated() {
            xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(XMLText.escaped(etag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let body = Array(xml.utf8)
        var answer = [UInt8]()
        _ = try perform(
            S3HTTPRequest(method: "POST", path: path(key), query: [("uploadId", uploadId)], body: .bytes(body)),
            payloadHash: Self.sha256Hex(body), operation: "complete-multipart", key: key,
            sink: { answer.append(contentsOf: $0) })
        // S3 may answer 200 with an <Error> document when completion fails late.
        let text = String(decoding: answer, as: UTF8.self)
        if text.contains("<Error>") {
            throw BlobStoreError.remote(
                operation: "complete-multipart", key: key, status: 200,
                code: S3XML.value("Code", in: text) ?? "InternalError",
                message: S3XML.value("Message", in: text) ?? "")
        }
        return S3XML.value("ETag", in: text) ?? ""
    }

    /// AbortMultipartUpload: frees the parts stored so far.
    public func abortMultipartUpload(_ key: String, uploadId: String) throws {
        _ = try perform(
            S3HTTPRequest(method: "DELETE", path: path(key), query: [("uploadId", uploadId)]),
            payloadHash: S3Signer.emptyPayloadHash, operation: "abort-multipart", key: key)
    }

    // MARK: The request loop

    /// Signs and sends `request`, retrying per the policy; returns the 2xx (or `accept`ed) answer
    /// and throws `BlobStoreError.remote` for any other, `.unavailable` when the store cannot be reached.
    public func perform(
        _ request: S3HTTPRequest, payloadHash: String, operation: String, key: String, accept: Set<Int> = [],
        head: (S3HTTPResponse) throws -> Void = { _ in }, sink: (UnsafeRawBufferPointer) throws -> Void = { _ in }
    ) throws -> S3HTTPResponse {
        let policy = configuration.retry
        var attempt = 1
        while true {
            var headers = [("host", configuration.hostHeader)] + request.headers
            signer.sign(
                method: request.method, path: request.path, query: request.query, headers: &headers,
                payloadHash: payloadHash)
            let query = S3Signer.canonicalQuery(request.query)
            let target = S3Signer.encodePath(request.path) + (query.isEmpty ? "" : "?" + query)
            do {
                let response = try transport.send(
                    method: request.method, target: target, headers: headers, body: request.body, head: head, sink: sink
                )
                if response.isSuccess || accept.contains(response.status) { return response }
                let text = String(decoding: response.errorBody, as: UTF8.self)
                let code = S3XML.value("Code", in: text) ?? Self.defaultCode(response.status)
                let message = S3XML.value("Message", in: text) ?? ""
                if S3RetryPolicy.isRetryable(status: response.status, code: code) && attempt < policy.maxAttempts {
                    backOff(attempt)
                    attempt += 1
                    continue
                }
                throw BlobStoreError.remote(
                    operation: operation, key: key, status: response.status, code: code, message: message)
            } catch let error as S3TransportError {
                if error.bodyStarted || attempt >= policy.maxAttempts {
                    throw BlobStoreError.unavailable(operation: operation, key: key, message: error.message)
                }
                backOff(attempt)
                attempt += 1
            }
        }
    }

    private func backOff(_ attempt: Int) {
        retried.add(1, ordering: .relaxed)
        Thread.sleep(forTimeInterval: configuration.retry.delay(afterAttempt: attempt))
    }

    /// The path of an object key (with the configured prefix), or of the bucket when nil.
    func path(_ key: String?) -> String {
        configuration.unencodedPath(objectKey: key.map { configuration.prefix + $0 })
    }

    private static func defaultCode(_ status: Int) -> String {
        switch status {
        case 403: return "AccessDenied"
        case 404: return "NoSuchKey"
        case 503: return "ServiceUnavailable"
        default: return "HTTP\(status)"
        }
    }

    /// SHA-256 of bytes, hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String { S3Signer.hex(SHA256.hash(data: bytes)) }

    /// SHA-256 of `length` bytes of a file from `offset`, hex, reading 1 MiB at a time.
    public static func sha256Hex(file path: String, offset: Int64 = 0, length: Int64? = nil) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BlobStoreError.io(operation: "open", path: path, message: "cannot open for reading")
        }
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        var hasher = SHA256()
        var remaining = length ?? Int64.max
        while remaining > 0 {
            let chunk = handle.readData(ofLength: Int(min(remaining, 1 << 20)))
            if chunk.isEmpty { break }
            hasher.update(data: chunk)
            remaining -= Int64(chunk.count)
        }
        return S3Signer.hex(hasher.finalize())
    }
}
