import Foundation

/// Lingering close (RFC 9112 §9.6, nginx's lingering_close): after an answer to a request whose body
/// was not read (413, 431, 403 before the body …), our FIN goes out and what the client still sends
/// is read and dropped, so its pending send does not turn into a reset that destroys the answer.
/// The bounds (`lingerTimeout` per pause, `lingerTime` in all, `maxLingerBytes`) are the state
/// machine's.
extension HTTPConnection {
    /// Shuts the write side after the response and drops what is buffered.
    func startLingering() -> Action {
        guard SystemCalls.shutdownWrite(fd) else { return .close(.afterResponse) }
        let dropped = buffer.readableCount
        buffer.consume(dropped)
        return machine.lingerStarted(discarded: dropped, now: loop.now)
    }

    /// Reads and drops input while lingering.
    func discardInput() -> Action {
        let space = buffer.writableSpace(minimum: 16 * 1024)
        let n = recv(fd, space.baseAddress, space.count, 0)
        if n > 0 { return machine.discarded(n, now: loop.now) }
        if n < 0 && errno == EINTR { return machine.resume() }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return machine.readWouldBlock() }
        // The client closed (or reset) after reading the answer: done.
        return n == 0 ? machine.readEnded() : machine.readFailed()
    }
}
