import Foundation
import Synchronization

/// An open file a response is sent from. An owned descriptor (`init(owning:)`) is the response's:
/// the connection takes it to sendfile from and closes it when the response is written, and a
/// response that is dropped instead (a 304, a HEAD, an error page put in its place) closes it when
/// released.
///
/// Opening once and answering from `fstat` is how static file servers avoid a second path lookup
/// and a race between the size they announce and the file they send.
///
/// A shared descriptor (`init(sharing:keptOpenBy:)`, an open-file cache's) is not the response's
/// to close: its owner keeps it open while this value holds it, and any number of responses may
/// send from it at once (sendfile with explicit offsets leaves the file position alone). It is a
/// plain value (the descriptor and a reference to its owner): a cache hit allocates nothing for it
/// (decision 041).
public struct HTTPFileDescriptor: Sendable {
    /// Who holds the descriptor.
    private enum Holder: Sendable {
        /// This value's own, closed by the box when the last copy goes.
        case owned(OwnedDescriptor)
        /// Someone else's, kept open by `keeper` while this value lives.
        case shared(fd: Int32, keeper: AnyObject & Sendable)
    }

    private let holder: Holder

    /// Takes ownership of an open, readable descriptor.
    public init(owning fd: Int32) { holder = .owned(OwnedDescriptor(fd)) }

    /// A descriptor `owner` keeps open (and closes) itself; held here until the response is sent.
    public init(sharing fd: Int32, keptOpenBy owner: AnyObject & Sendable) { holder = .shared(fd: fd, keeper: owner) }

    /// Whether the descriptor belongs to someone else, who closes it.
    var isShared: Bool {
        if case .shared = holder { return true }
        return false
    }

    /// Hands an owned descriptor over to the caller, who must close it; -1 when already taken.
    /// A shared one is lent, as often as asked: the caller must keep this value until it has
    /// sent, and not close the descriptor. Called on the connection's thread, after the handler
    /// has returned the response.
    func take() -> Int32 {
        switch holder {
        case .owned(let owned): return owned.take()
        case .shared(let fd, _): return fd
        }
    }
}

/// An owned descriptor: closed on release unless it was taken (once per response, uncontended).
private final class OwnedDescriptor: Sendable {
    /// The descriptor; -1 once taken.
    private let fd: Atomic<Int32>

    init(_ fd: Int32) { self.fd = Atomic(fd) }

    deinit {
        let fd = fd.load(ordering: .relaxed)
        if fd >= 0 { SystemCalls.close(fd) }
    }

    /// The descriptor, now the caller's to close; -1 when already taken.
    func take() -> Int32 { fd.exchange(-1, ordering: .relaxed) }
}
