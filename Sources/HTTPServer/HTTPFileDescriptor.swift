import Foundation

/// An open file a response is sent from. It owns the descriptor: the connection takes it to
/// sendfile from and closes it when the response is written, and a response that is dropped
/// instead (a 304, a HEAD, an error page put in its place) closes it when released.
///
/// Opening once and answering from `fstat` is how static file servers avoid a second path lookup
/// and a race between the size they announce and the file they send.
public final class HTTPFileDescriptor: @unchecked Sendable {
    private var fd: Int32

    /// Takes ownership of an open, readable descriptor.
    public init(owning fd: Int32) { self.fd = fd }

    deinit {
        if fd >= 0 { SystemCalls.close(fd) }
    }

    /// Hands the descriptor over to the caller, who must close it; -1 when already taken.
    /// Called once, on the connection's thread, after the handler has returned the response.
    func take() -> Int32 {
        let taken = fd
        fd = -1
        return taken
    }
}
