import Foundation
import Synchronization

/// An open file a response is sent from. It owns the descriptor: the connection takes it to
/// sendfile from and closes it when the response is written, and a response that is dropped
/// instead (a 304, a HEAD, an error page put in its place) closes it when released.
///
/// Opening once and answering from `fstat` is how static file servers avoid a second path lookup
/// and a race between the size they announce and the file they send.
///
/// A shared descriptor (`init(sharing:keptOpenBy:)`, an open-file cache's) is not the response's
/// to close: its owner keeps it open while this object lives, and any number of responses may
/// send from it at once (sendfile with explicit offsets leaves the file position alone).
public final class HTTPFileDescriptor: Sendable {
    /// The descriptor; -1 once an owned one was taken (an uncontended exchange, once per response).
    private let fd: Atomic<Int32>
    /// What keeps a shared descriptor open; nil when this object owns the descriptor.
    private let keeper: (AnyObject & Sendable)?

    /// Takes ownership of an open, readable descriptor.
    public init(owning fd: Int32) {
        self.fd = Atomic(fd)
        keeper = nil
    }

    /// A descriptor `owner` keeps open (and closes) itself; held here until the response is sent.
    public init(sharing fd: Int32, keptOpenBy owner: AnyObject & Sendable) {
        self.fd = Atomic(fd)
        keeper = owner
    }

    deinit {
        let fd = fd.load(ordering: .relaxed)
        if keeper == nil && fd >= 0 { SystemCalls.close(fd) }
    }

    /// Whether the descriptor belongs to someone else, who closes it.
    var isShared: Bool { keeper != nil }

    /// Hands an owned descriptor over to the caller, who must close it; -1 when already taken.
    /// A shared one is lent, as often as asked: the caller must keep this object until it has
    /// sent, and not close the descriptor. Called on the connection's thread, after the handler
    /// has returned the response.
    func take() -> Int32 {
        if keeper != nil { return fd.load(ordering: .relaxed) }
        return fd.exchange(-1, ordering: .relaxed)
    }
}
