import Foundation

/// A blocking HTTP/1.1 test client over a plain socket, so tests control every byte the server
/// sees: requests URLSession would normalise or refuse (dot segments, encoded NULs, bodies cut
/// off, pipelining, slow readers). Use one connection (`init`, `send`, `readResponse`) or one
/// whole exchange (`exchange`, which reads until the server closes).
public final class RawHTTPClient {
    /// A response as read off the wire.
    public typealias Response = RawHTTPResponse

    /// Why the client could not go on.
    public enum ClientError: Error {
        /// The name did not resolve or the connection was refused.
        case connectFailed(String)
        /// The server closed before a whole response arrived.
        case closed
        /// A status line or header field that is not HTTP/1.x.
        case malformed(String)
    }

    /// The connected socket.
    public let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to `host:port`. `receiveTimeout` seconds bounds every read, so a broken server fails
    /// the test instead of hanging it; `receiveBuffer` shrinks SO_RCVBUF before connecting, so a slow
    /// reader really is slow; `sendBuffer` shrinks SO_SNDBUF, so a large write cannot hide in the
    /// kernel as it does on loopback.
    public init(
        port: Int, host: String = "127.0.0.1", receiveBuffer: Int? = nil, sendBuffer: Int? = nil,
        receiveTimeout: Int = 10
    ) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
            throw ClientError.connectFailed("resolve \(host)")
        }
        defer { freeaddrinfo(result) }
        fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if var size = sendBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            let message = String(cString: strerror(errno))
            throw ClientError.connectFailed(message)  // deinit closes fd: the instance is fully initialised
        }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    // MARK: - One exchange

    /// Sends `head` (and `body`) to 127.0.0.1:`port`, reads until the server closes, parses the
    /// answer. The head should ask for `Connection: close`.
    public static func exchange(port: Int, head: String, body: [UInt8] = []) throws -> Response {
        try exchange(port: port, bytes: Array(head.utf8) + body)
    }

    /// Sends `bytes` as they are to 127.0.0.1:`port`, reads until the server closes, parses the answer.
    /// A server that refuses and closes before reading everything still has its answer read.
    public static func exchange(port: Int, bytes request: [UInt8]) throws -> Response {
        let client = try RawHTTPClient(port: port, receiveTimeout: 30)
        client.send(request)
        return try parse(client.readToEnd())
    }

    /// Parses a whole response: head, and everything after it as the body.
    public static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw TestSetupError(description: "no response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestSetupError(description: "bad status line \(lines[0])")
        }
        var headers = RawHTTPHeaders()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Response(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }

    /// `bytes` as chunked transfer coding with chunks of `size`.
    public static func chunked(_ bytes: [UInt8], size: Int) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            let n = min(size, bytes.count - offset)
            out += Array((String(n, radix: 16) + "\r\n").utf8) + bytes[offset..<offset + n] + [13, 10]
            offset += n
        }
        return out + Array("0\r\n\r\n".utf8)
    }

    // MARK: - One connection

    /// Sends every byte (false when the server has closed).
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Sends `text` as UTF-8 (false when the server has closed).
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Closes the sending side (the server sees EOF after the bytes sent).
    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { throw ClientError.closed }
        pending.append(contentsOf: chunk[0..<n])
    }

    private func readLine() throws -> String {
        while true {
            if let i = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[0..<i], as: UTF8.self)
                pending.removeFirst(i + 1)
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            try fill()
        }
    }

    /// Exactly `n` bytes (after what a response read left over), for protocols after an upgrade.
    public func readBytes(_ n: Int) throws -> [UInt8] { try readExactly(n) }

    private func readExactly(_ n: Int) throws -> [UInt8] {
        while pending.count < n { try fill() }
        let bytes = Array(pending[0..<n])
        pending.removeFirst(n)
        return bytes
    }

    /// Reads one response framed by its Content-Length (or to the end without one); `bodyless`
    /// for answers to HEAD.
    public func readResponse(bodyless: Bool = false) throws -> Response {
        let head = try readHead()
        let status = head.status
        let headers = head.headers
        if bodyless || status < 200 || status == 204 || status == 304 {
            return head
        }
        if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            return Response(status: status, headers: headers, body: try readExactly(length))
        }
        return Response(status: status, headers: headers, body: try readToEnd())
    }

    /// Reads a response's status line and header fields only (the body is left to `readBytes`,
    /// `readUntilClosed`), e.g. to read a large body slowly.
    public func readHead() throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError.malformed(statusLine)
        }
        var headers = RawHTTPHeaders()
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformed(line) }
            headers.add(
                String(line[..<colon]),
                String(line[line.index(after: colon)...]).trimmingCharacters(in: CharacterSet(charactersIn: " \t")))
        }
        return Response(status: status, headers: headers, body: [])
    }

    /// Everything until the server closes (`closed`: an end of stream or a reset) or, if it neither
    /// sends nor closes for the receive timeout, what came until then (`closed` false).
    public func readUntilClosed() -> (bytes: [UInt8], closed: Bool) {
        var bytes = pending
        pending = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                bytes.append(contentsOf: chunk[0..<n])
            } else if n == 0 || errno == ECONNRESET {
                return (bytes, true)
            } else if errno != EINTR {
                return (bytes, false)
            }
        }
    }

    /// Everything until the server closes (or the receive timeout).
    public func readToEnd() throws -> [UInt8] {
        while true {
            do { try fill() } catch { break }
        }
        defer { pending = [] }
        return pending
    }

    /// Whether the server has sent something (or closed) that has not been read yet; does not wait.
    public func hasPendingInput() -> Bool {
        if !pending.isEmpty { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Whether the server has closed the connection (reads EOF with nothing pending).
    public func isClosedByServer() -> Bool {
        if !pending.isEmpty { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}
