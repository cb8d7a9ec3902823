import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One blocking TCP connection to the object store with a read buffer: owns the descriptor and
/// closes it in `deinit`. Used by one request at a time (the transport's pool hands it out).
// @unchecked: its buffer is used by one request at a time; the pool passes it on under its mutex.
final class S3SocketConnection: @unchecked Sendable {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var start = 0
    private var end = 0
    /// Requests sent on this connection (more than one means keep-alive reuse).
    var requestCount = 0
    /// Runs once the descriptor is closed (the transport counts open connections).
    private let onClose: @Sendable () -> Void

    /// Connects to `host:port` within `timeout` seconds; reads and writes then time out after
    /// `timeout` seconds of silence (`SO_RCVTIMEO`, `SO_SNDTIMEO`).
    init(host: String, port: Int, timeout: Double, onClose: @escaping @Sendable () -> Void = {}) throws {
        self.onClose = onClose
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw S3TransportError("resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let info = candidate {
            candidate = info.pointee.ai_next
            let s = socket(
                info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                info.pointee.ai_protocol)
            if s < 0 {
                lastError = String(cString: strerror(errno))
                continue
            }
            if Self.connect(s, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout: timeout) {
                connected = s
                break
            }
            lastError = String(cString: strerror(errno))
            close(s)
        }
        guard connected >= 0 else { throw S3TransportError("connect \(host):\(port): \(lastError)") }
        fd = connected
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
        onClose()
    }

    /// A non-blocking connect bounded by `poll`, then back to blocking mode.
    private static func connect(_ s: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t, timeout: Double)
        -> Bool
    {
        let flags = fcntl(s, F_GETFL)
        _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
        var result = Glibc.connect(s, address, length)
        if result != 0 && errno == EINPROGRESS {
            var pfd = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&pfd, 1, Int32(timeout * 1000))
            if ready <= 0 {
                errno = ready == 0 ? ETIMEDOUT : errno
                return false
            }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &size)
            if error != 0 {
                errno = error
                return false
            }
            result = 0
        }
        _ = fcntl(s, F_SETFL, flags)
        return result == 0
    }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw S3TransportError("send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Sends `length` bytes of the file at `path` from `offset` with `sendfile` (no copy through
    /// user space).
    func sendFile(path: String, offset: Int64, length: Int64) throws {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw S3TransportError("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(file) }
        var position = off_t(offset)
        var remaining = length
        while remaining > 0 {
            let n = sendfile(fd, file, &position, Int(min(remaining, 1 << 30)))
            if n < 0 {
                if errno == EINTR { continue }
                throw S3TransportError("sendfile: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw S3TransportError("sendfile \(path): file shorter than announced") }
            remaining -= Int64(n)
        }
    }

    /// Fills the buffer when empty; returns false at end of stream.
    private func fill() throws -> Bool {
        if start < end { return true }
        start = 0
        end = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { throw S3TransportError("recv: timed out") }
                throw S3TransportError("recv: \(String(cString: strerror(errno)))")
            }
            end = n
            return n > 0
        }
    }

    /// Whether no byte was ever received for the current response (a reused connection the server
    /// had already closed fails here, and can be retried on a fresh one at no risk).
    private(set) var receivedAny = false

    /// Reads one CRLF-terminated line (without the CRLF), refusing lines over 16 KiB.
    func readLine() throws -> String {
        var line = [UInt8]()
        while true {
            guard try fill() else { throw S3TransportError("connection closed by the object store") }
            receivedAny = true
            while start < end {
                let byte = buffer[start]
                start += 1
                if byte == 0x0A {
                    if line.last == 0x0D { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                line.append(byte)
                if line.count > 16 * 1024 { throw S3TransportError("response line too long") }
            }
        }
    }

    /// Passes exactly `count` bytes to `sink`, in buffer-sized chunks.
    func readBody(count: Int64, into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var remaining = count
        while remaining > 0 {
            guard try fill() else { throw S3TransportError("connection closed with \(remaining) body bytes missing") }
            let n = min(Int64(end - start), remaining)
            try buffer.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[start..<start + Int(n)])) }
            start += Int(n)
            remaining -= n
        }
    }

    /// Passes everything until the peer closes to `sink` (a response with neither length nor chunking).
    func readToEnd(into sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        while try fill() {
            try buffer.withUnsafeBytes { try sink(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            start = end
        }
    }

    /// Resets the per-response state before a new request.
    func beginRequest() {
        receivedAny = false
        requestCount += 1
    }
}
