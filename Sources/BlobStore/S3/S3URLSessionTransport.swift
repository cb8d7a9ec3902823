import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The object store through Foundation's URLSession (libcurl underneath on Linux): needed for
/// `https:` endpoints, which `S3SocketTransport` cannot speak. Blocking: each call waits for its
/// task. Bodies arrive whole, then go to the sink (URLSession buffers them).
public final class S3URLSessionTransport: S3Transport, Sendable {
    private let base: URL
    private let session: URLSession

    /// A transport to the scheme, host and port of `endpoint`.
    public init(endpoint: URL, timeout: Double) {
        var components = URLComponents()
        components.scheme = endpoint.scheme
        components.host = endpoint.host
        components.port = endpoint.port
        base = components.url ?? endpoint
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    deinit { session.finishTasksAndInvalidate() }

    public func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        head: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        guard let url = URL(string: base.absoluteString + target) else {
            throw S3TransportError("bad request target \(target)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers where name.lowercased() != "host" {
            request.setValue(value, forHTTPHeaderField: name)
        }
        let semaphore = DispatchSemaphore(value: 0)
        // @unchecked: written once by the completion handler before it signals, read after the wait.
        final class Box: @unchecked Sendable {
            var data: Data?
            var response: URLResponse?
            var error: Error?
        }
        let box = Box()
        let completion: @Sendable (Data?, URLResponse?, Error?) -> Void = { data, response, error in
            box.data = data
            box.response = response
            box.error = error
            semaphore.signal()
        }
        let task: URLSessionTask
        switch body {
        case .none:
            task = session.dataTask(with: request, completionHandler: completion)
        case .bytes(let bytes):
            task = session.uploadTask(with: request, from: Data(bytes), completionHandler: completion)
        case .file(let path, let offset, let length):
            guard let handle = FileHandle(forReadingAtPath: path) else { throw S3TransportError("open \(path) failed") }
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(offset))
            let data = handle.readData(ofLength: Int(length))
            task = session.uploadTask(with: request, from: data, completionHandler: completion)
        }
        task.resume()
        semaphore.wait()
        if let error = box.error { throw S3TransportError("\(method) \(target): \(error.localizedDescription)") }
        guard let http = box.response as? HTTPURLResponse else {
            throw S3TransportError("\(method) \(target): no HTTP response")
        }
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name.lowercased()] = value }
        }
        let data = box.data ?? Data()
        if (200..<300).contains(http.statusCode) {
            try head(S3HTTPResponse(status: http.statusCode, headers: fields))
            try data.withUnsafeBytes { try sink($0) }
            return S3HTTPResponse(status: http.statusCode, headers: fields)
        }
        return S3HTTPResponse(status: http.statusCode, headers: fields, errorBody: Array(data.prefix(64 * 1024)))
    }
}
