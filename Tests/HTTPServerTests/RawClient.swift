import Foundation
@testable import HTTPServer

/// A blocking test client over a plain socket, so tests control every byte the server sees.
final class RawClient {
    /// A response as read off the wire.
    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    enum ClientError: Error { case connectFailed(String), closed, malformed(String) }

    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to `host:port` with a 10 s receive timeout, so a broken server fails the test instead of hanging it.
    /// `receiveBuffer` shrinks SO_RCVBUF before connecting, so a slow reader really is slow;
    /// `sendBuffer` shrinks SO_SNDBUF, so a large write cannot hide in the kernel as it does on loopback.
    init(port: Int, host: String = "127.0.0.1", receiveBuffer: Int? = nil, sendBuffer: Int? = nil) throws {
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
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Glibc.close(fd) }

    /// Sends every byte (false when the server has closed).
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Closes the sending side (the server sees EOF after the bytes sent).
    func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

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

    private func readExactly(_ n: Int) throws -> [UInt8] {
        while pending.count < n { try fill() }
        let bytes = Array(pending[0..<n])
        pending.removeFirst(n)
        return bytes
    }

    /// Reads one response; `bodyless` for answers to HEAD.
    func readResponse(bodyless: Bool = false) throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError.malformed(statusLine)
        }
        var headers = HTTPHeaders()
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformed(line) }
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingSpaces())
        }
        if bodyless || status < 200 || status == 204 || status == 304 {
            return Response(status: status, headers: headers, body: [])
        }
        if let length = headers["Content-Length"].flatMap({ Int($0) }) {
            return Response(status: status, headers: headers, body: try readExactly(length))
        }
        return Response(status: status, headers: headers, body: try readToEnd())
    }

    /// Everything until the server closes.
    func readToEnd() throws -> [UInt8] {
        while true {
            do { try fill() } catch { break }
        }
        defer { pending = [] }
        return pending
    }

    /// Whether the server has sent something (or closed) that has not been read yet; does not wait.
    func hasPendingInput() -> Bool {
        if !pending.isEmpty { return true }
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Whether the server has closed the connection (reads EOF with nothing pending).
    func isClosedByServer() -> Bool {
        if !pending.isEmpty { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }
}
