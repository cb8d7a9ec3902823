import Foundation

/// One HTTP/1.1 exchange over a raw socket, for requests URLSession would normalise or refuse
/// (dot segments, encoded NULs, chunked bodies that must be cut off).
enum RawHTTP {
    /// A parsed response.
    struct Response {
        let status: Int
        let headers: [(String, String)]
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
        }
    }

    /// Sends `head` (and `body`) to 127.0.0.1:`port`, reads until the server closes, parses the answer.
    /// The head should ask for `Connection: close`.
    static func exchange(port: Int, head: String, body: [UInt8] = []) throws -> Response {
        try exchange(port: port, bytes: Array(head.utf8) + body)
    }

    /// Sends `bytes` as they are to 127.0.0.1:`port`, reads until the server closes, parses the answer.
    static func exchange(port: Int, bytes request: [UInt8]) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSetupError(description: "socket failed") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestSetupError(description: "connect failed") }
        var offset = 0
        while offset < request.count {
            let n = request[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }  // the server may refuse and close before reading everything
            offset += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return try parse(received)
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw TestSetupError(description: "no response head in \(bytes.count) bytes")
        }
        let lines = String(decoding: bytes[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw TestSetupError(description: "bad status line \(lines[0])")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return Response(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
    }

    /// `bytes` as chunked transfer coding with chunks of `size`.
    static func chunked(_ bytes: [UInt8], size: Int) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            let n = min(size, bytes.count - offset)
            out += Array((String(n, radix: 16) + "\r\n").utf8) + bytes[offset..<offset + n] + [13, 10]
            offset += n
        }
        return out + Array("0\r\n\r\n".utf8)
    }
}
