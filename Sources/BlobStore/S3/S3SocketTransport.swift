import Foundation
import Synchronization

/// A small blocking HTTP/1.1 client on plain sockets (RFC 9112 framing: Content-Length or chunked
/// bodies, keep-alive), with a pool of idle connections reused across requests. `http:` only:
/// there is no TLS here (an `https:` endpoint uses `S3URLSessionTransport`).
public final class S3SocketTransport: S3Transport, Sendable {
    private let host: String
    private let port: Int
    private let timeout: Double
    private let maxIdle: Int
    private let state = Mutex(State())

    /// The pool and its counts, under the mutex.
    private struct State {
        var idle: [S3SocketConnection] = []
        var opened = 0
        var live = 0
    }

    /// A transport to `host:port`; keeps at most `maxIdle` idle connections.
    public init(host: String, port: Int, timeout: Double, maxIdle: Int = 16) {
        self.host = host
        self.port = port
        self.timeout = timeout
        self.maxIdle = maxIdle
    }

    /// Connections opened so far (fewer than requests sent means keep-alive works).
    public var connectionsOpened: Int {
        state.withLock { $0.opened }
    }

    /// Connections open now, idle or in use: one more than the idle ones per request in flight, so
    /// with nothing in flight any surplus over `idleConnections` is a leak.
    public var connectionsOpen: Int {
        state.withLock { $0.live }
    }

    /// Connections waiting in the pool for the next request.
    public var idleConnections: Int {
        state.withLock { $0.idle.count }
    }

    public func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        head onHead: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method == "PUT" || method == "POST" || body.length > 0 { head += "content-length: \(body.length)\r\n" }
        head += "\r\n"
        let headBytes = Array(head.utf8)

        let (reused, connection) = try checkOut()
        do {
            let response = try exchange(
                connection, method: method, head: headBytes, body: body, onHead: onHead, sink: sink)
            return response
        } catch let error as S3TransportError where reused && !connection.receivedAny && !error.bodyStarted {
            // The server closed the idle connection meanwhile: nothing was processed, try a fresh one.
            let fresh = try connect()
            return try exchange(fresh, method: method, head: headBytes, body: body, onHead: onHead, sink: sink)
        }
    }

    private func exchange(
        _ connection: S3SocketConnection, method: String, head: [UInt8], body: S3HTTPRequest.Body,
        onHead: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        connection.beginRequest()
        switch body {
        case .none:
            try head.withUnsafeBytes { try connection.write($0) }
        case .bytes(let bytes):
            if bytes.count < 64 * 1024 {
                try (head + bytes).withUnsafeBytes { try connection.write($0) }
            } else {
                try head.withUnsafeBytes { try connection.write($0) }
                try bytes.withUnsafeBytes { try connection.write($0) }
            }
        case .file(let path, let offset, let length):
            try head.withUnsafeBytes { try connection.write($0) }
            try connection.sendFile(path: path, offset: offset, length: length)
        }

        // Status line and headers (RFC 9112 §4, §5); 1xx interim answers are skipped.
        var status = 0
        var version = ""
        var headers: [String: String] = [:]
        repeat {
            let statusLine = try connection.readLine()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let code = Int(parts[1]) else {
                throw S3TransportError("malformed status line from the object store: \(statusLine.prefix(80))")
            }
            version = String(parts[0])
            status = code
            headers = [:]
            while true {
                let line = try connection.readLine()
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                headers[name] = headers[name].map { $0 + ", " + value } ?? value
            }
        } while (100..<200).contains(status)

        let success = (200..<300).contains(status)
        var errorBody = [UInt8]()
        var started = false
        let deliver: (UnsafeRawBufferPointer) throws -> Void = { chunk in
            if success {
                started = true
                try sink(chunk)
            } else if errorBody.count < 64 * 1024 {
                errorBody.append(contentsOf: chunk.prefix(64 * 1024 - errorBody.count))
            }
        }
        var keepAlive = version == "HTTP/1.1" && headers["connection"]?.lowercased() != "close"
        if success { try onHead(S3HTTPResponse(status: status, headers: headers)) }
        do {
            if method == "HEAD" || status == 204 || status == 304 {
                // No body (RFC 9112 §6.3 rule 1).
            } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                try readChunked(connection, into: deliver)
            } else if let lengthText = headers["content-length"], let length = Int64(lengthText) {
                try connection.readBody(count: length, into: deliver)
            } else {
                keepAlive = false
                try connection.readToEnd(into: deliver)
            }
        } catch let error as S3TransportError {
            throw S3TransportError(error.message, bodyStarted: started)
        }
        if keepAlive { checkIn(connection) }
        return S3HTTPResponse(status: status, headers: headers, errorBody: errorBody)
    }

    /// Chunked transfer coding (RFC 9112 §7.1): hex size lines, data, CRLF, then trailers.
    private func readChunked(_ connection: S3SocketConnection, into deliver: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        while true {
            let sizeLine = try connection.readLine()
            let sizeText = sizeLine.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int64(sizeText, radix: 16), size >= 0 else {
                throw S3TransportError("malformed chunk size from the object store")
            }
            if size == 0 {
                while !(try connection.readLine()).isEmpty {}
                return
            }
            try connection.readBody(count: size, into: deliver)
            _ = try connection.readLine()
        }
    }

    private func checkOut() throws -> (Bool, S3SocketConnection) {
        if let connection = state.withLock({ $0.idle.popLast() }) { return (true, connection) }
        return (false, try connect())
    }

    private func connect() throws -> S3SocketConnection {
        let connection = try S3SocketConnection(host: host, port: port, timeout: timeout) { [weak self] in
            self?.state.withLock { $0.live -= 1 }
        }
        state.withLock { state in
            state.opened += 1
            state.live += 1
        }
        return connection
    }

    private func checkIn(_ connection: S3SocketConnection) {
        state.withLock { state in
            if state.idle.count < maxIdle { state.idle.append(connection) }
        }
    }
}
