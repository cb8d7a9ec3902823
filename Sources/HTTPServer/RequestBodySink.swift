import Foundation

/// Collects a request body: in memory up to the threshold, then in a temporary file, so large
/// uploads never sit whole in memory. Passes each chunk to the route's observer first.
final class RequestBodySink {
    private let threshold: Int
    private let directory: String
    private let observer: HTTPBodyObserver?
    private var bytes: [UInt8] = []
    private var fd: Int32 = -1
    private(set) var path: String?
    private(set) var length = 0

    /// A sink for a body of `expectedLength` bytes (nil when chunked).
    init(expectedLength: Int?, threshold: Int, directory: String, observer: HTTPBodyObserver?) throws {
        self.threshold = threshold
        self.directory = directory
        self.observer = observer
        if let expectedLength {
            if expectedLength > threshold {
                try openFile()
            } else {
                bytes.reserveCapacity(expectedLength)
            }
        }
    }

    deinit { discard() }

    /// Appends decoded body bytes.
    func append(_ chunk: UnsafeRawBufferPointer) throws {
        guard chunk.count > 0 else { return }
        try observer?.consume(chunk)
        length += chunk.count
        if fd < 0 && length > threshold {
            try openFile()
            try write(bytes.withUnsafeBytes { $0 })
            bytes = []
        }
        if fd >= 0 {
            try write(chunk)
        } else {
            bytes.append(contentsOf: chunk)
        }
    }

    /// The finished body. The file (if any) now belongs to the request; the server removes it after
    /// the response unless a handler moved it away.
    func finish() throws -> HTTPRequestBody {
        if fd >= 0 {
            close(fd)
            fd = -1
            let p = path!
            path = nil
            return .file(path: p, length: length)
        }
        return length == 0 ? .empty : .bytes(bytes)
    }

    /// Closes and deletes a temporary file of an unfinished body.
    func discard() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        if let path {
            unlink(path)
            self.path = nil
        }
    }

    private func openFile() throws {
        var template = Array((directory.hasSuffix("/") ? directory : directory + "/").utf8CString.dropLast())
        template.append(contentsOf: Array("galleryd-body-XXXXXX".utf8CString))
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            if errno == ENOSPC || errno == EDQUOT {
                throw HTTPError(.insufficientStorage, "insufficient storage: the server's disk is full")
            }
            throw HTTPError(.internalServerError, "cannot create temporary file: \(SocketError.errnoText)")
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        fd = descriptor
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    private func write(_ data: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < data.count {
            let n = SystemCalls.write(fd, data.baseAddress! + offset, data.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                // A full disk is the server's condition, not a bug: 507 (RFC 4918 §11.5), which clients retry.
                if errno == ENOSPC || errno == EDQUOT {
                    throw HTTPError(.insufficientStorage, "insufficient storage: the server's disk is full")
                }
                throw HTTPError(.internalServerError, "cannot write temporary file: \(SocketError.errnoText)")
            }
            offset += n
        }
    }
}
