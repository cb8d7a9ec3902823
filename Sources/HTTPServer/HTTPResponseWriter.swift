import Foundation

/// The response a connection is writing: its encoded head and in-memory body go out together in
/// one gathered `sendmsg` (two `iovec`s, no copy into one buffer), then a file body with
/// `sendfile(2)`. Remembers how far each part got, so a write that stops on a full send buffer
/// continues where it stopped. Owns the body's file descriptor until `finish()`. A streamed body
/// (`HTTPResponseBody.stream`, a proxied object) goes out chunk by chunk as its producer writes it.
struct HTTPResponseWriter {
    /// How a `flush` ended.
    enum Outcome: Equatable {
        /// The whole response is out.
        case done
        /// The socket's send buffer is full: flush again when the reactor says it is writable.
        case blocked
        /// The file ended before its announced length: the response cannot be completed.
        case fileEndedEarly
        /// The socket failed (the client vanished): the response is lost.
        case failed
        /// A streamed body has nothing buffered: flush again when its waker runs.
        case waitingForStream
        /// A streamed body failed or broke its announced length (the message says which): the
        /// head is out with a Content-Length, so closing is the only way left to tell the client.
        case streamFailed(String)
    }

    /// The status line and header section (`HTTPResponseEncoder.encodeHead` writes into it), sent
    /// from there. Its memory is kept from one response to the next: starting over is setting a
    /// count, where emptying an array was ~80 instructions and filling it another ~140 (decision
    /// 041, round 7).
    let headBytes = ScratchBytes(capacity: 512)
    /// The head as an array (tests set and read it).
    var head: [UInt8] {
        get { Array(headBytes.bytes) }
        set {
            headBytes.removeAll()
            newValue.withUnsafeBytes { headBytes.append($0) }
        }
    }
    private var headSent = 0
    private var body: [UInt8] = []
    private var bodySent = 0
    private var fileFD: Int32 = -1
    /// The shared descriptor `fileFD` was lent from (kept until the exchange ends, not closed), or nil
    /// when `fileFD` is the writer's own.
    private var sharedFile: HTTPFileDescriptor?
    private var fileOffset = 0
    private var fileRemaining = 0
    /// A streamed body being sent, and its bytes still to come.
    private(set) var stream: HTTPBodyStream?
    private var streamRemaining = 0
    /// Bytes of this response written so far, head and body, for the access log and metrics.
    private(set) var bytesWritten = 0

    /// Encodes the response's head into `headBytes` with the loop's `encoder`: the buffer read
    /// through the writer in place, not copied out of it (a retain and a release; decision 041,
    /// round 9).
    mutating func encodeHead(
        _ response: borrowing HTTPResponse, with encoder: inout HTTPResponseEncoder, requestID: String,
        clientVersion: HTTPVersion, keepAlive decide: (_ closeRequested: Bool) -> Bool
    ) {
        encoder.encodeHead(
            response, into: headBytes, requestID: requestID, clientVersion: clientVersion, keepAlive: decide)
    }

    /// Forgets the previous response (keeping the head's storage) before a new one is encoded.
    mutating func begin() {
        headBytes.removeAll()
        headSent = 0
        body = []
        bodySent = 0
        fileRemaining = 0
        streamRemaining = 0
        bytesWritten = 0
    }

    /// Takes a file body's descriptor (or opens its path) so `flush` can `sendfile` it; a
    /// `.descriptor` is taken even when no body is sent (a HEAD, a 304), so it is closed with the
    /// exchange. Returns what could not be opened, or nil.
    mutating func takeFile(of responseBody: HTTPResponseBody, sendsBody: Bool) -> String? {
        switch responseBody {
        case .descriptor(let file, let offset, let length):
            fileFD = file.take()
            if fileFD < 0 { return "a descriptor already sent" }
            if file.isShared { sharedFile = file }
            if sendsBody && length > 0 {
                fileOffset = offset
                fileRemaining = length
            }
        case .file(let path, let offset, let length) where sendsBody && length > 0:
            fileFD = open(path, O_RDONLY | O_CLOEXEC)
            if fileFD < 0 { return "\(path): \(SocketError.errnoText)" }
            fileOffset = offset
            fileRemaining = length
        default:
            break
        }
        return nil
    }

    /// The in-memory body, written right after the head.
    mutating func setBody(_ bytes: [UInt8]) { body = bytes }

    /// Takes a streamed body to send `length` bytes of; the caller sets the stream's waker.
    mutating func setStream(_ stream: HTTPBodyStream, length: Int) {
        self.stream = stream
        streamRemaining = length
    }

    /// Writes what is pending to `fd` without blocking, and how many bytes that took.
    mutating func flush(to fd: Int32) -> (outcome: Outcome, written: Int) {
        var written = 0
        while true {
            if bodySent == body.count, stream != nil {
                // The head (if still unsent) goes out with the first chunk, or alone while none is there.
                switch nextStreamChunk() {
                case .ready, .done:
                    break
                case .wait:
                    if headSent == headBytes.count { return (.waitingForStream, written) }
                case .failed(let message):
                    return (.streamFailed(message), written)
                }
            }
            guard headSent < headBytes.count || bodySent < body.count else { break }
            let n = sendHeadAndBody(fd)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return (.blocked, written) }
                return (.failed, written)
            }
            written += n
            bytesWritten += n
            let headLeft = headBytes.count - headSent
            if n <= headLeft {
                headSent += n
            } else {
                headSent = headBytes.count
                bodySent += n - headLeft
            }
        }
        while fileRemaining > 0 {
            let n = SystemCalls.sendfile(
                socket: fd, file: fileFD, offset: &fileOffset, count: min(fileRemaining, 1 << 30))
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return (.blocked, written) }
                return (.failed, written)
            }
            // The file is shorter than announced.
            if n == 0 { return (.fileEndedEarly, written) }
            fileRemaining -= n
            written += n
            bytesWritten += n
        }
        return (.done, written)
    }

    /// Closes the file body's descriptor, stops a streamed body's producer and drops the body:
    /// the exchange is over.
    mutating func finish() {
        closeFile()
        cancelStream()
        body = []
    }

    /// Stops a streamed body's producer (its next `write` throws) and forgets the stream.
    mutating func cancelStream() {
        stream?.cancel()
        stream = nil
    }

    /// What the next chunk of a streamed body allows `flush` to do.
    private enum StreamStep {
        /// `body` holds the next chunk.
        case ready
        /// Nothing buffered: wait for the stream's waker.
        case wait
        /// Every announced byte went out; the stream is released.
        case done
        /// The stream failed or broke its length.
        case failed(String)
    }

    /// Moves the stream's next chunk into `body`, checking it against the announced length.
    private mutating func nextStreamChunk() -> StreamStep {
        guard let stream else { return .done }
        if streamRemaining == 0 {
            // Every announced byte went out; the producer's own end is not waited for.
            cancelStream()
            return .done
        }
        switch stream.read() {
        case .bytes(let bytes):
            guard bytes.count <= streamRemaining else { return .failed("streamed body longer than its Content-Length") }
            body = bytes
            bodySent = 0
            streamRemaining -= bytes.count
            return .ready
        case .pending:
            return .wait
        case .end:
            return .failed("streamed body ended \(streamRemaining) bytes short of its Content-Length")
        case .failed(let message):
            return .failed("streamed body failed: \(message)")
        }
    }

    /// Closes the file body's descriptor, if one is open (a shared one is only let go of).
    mutating func closeFile() {
        if fileFD >= 0 {
            if sharedFile == nil { SystemCalls.close(fileFD) }
            fileFD = -1
        }
        sharedFile = nil
    }

    /// One `sendmsg` of what is left of the head and the in-memory body.
    private func sendHeadAndBody(_ fd: Int32) -> Int {
        let headSent = self.headSent
        let bodySent = self.bodySent
        // No signal: a vanished client is an EPIPE, not a SIGPIPE. More follows when a file does
        // (not for a stream: its next chunk may be a while, and the kernel would hold this one).
        let flags = SystemCalls.noSignal | (fileRemaining > 0 ? SystemCalls.moreFollows : 0)
        let head = UnsafeRawBufferPointer(headBytes.bytes)
        return body.withUnsafeBytes { bytes in
            var vectors = (iovec(), iovec())
            var count = 0
            withUnsafeMutableBytes(of: &vectors) { raw in
                let iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
                if headSent < head.count {
                    iov[count] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: head.baseAddress! + headSent),
                        iov_len: head.count - headSent)
                    count += 1
                }
                if bodySent < bytes.count {
                    iov[count] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + bodySent),
                        iov_len: bytes.count - bodySent)
                    count += 1
                }
            }
            return withUnsafeMutablePointer(to: &vectors) { pointer in
                pointer.withMemoryRebound(to: iovec.self, capacity: 2) { iov in
                    var message = msghdr()
                    message.msg_iov = iov
                    message.msg_iovlen = count
                    return sendmsg(fd, &message, flags)
                }
            }
        }
    }
}
