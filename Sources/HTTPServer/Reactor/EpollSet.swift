#if os(Linux)
    import Foundation

    /// One event loop's edge-triggered epoll set, as both Linux reactors watch their sockets
    /// (`EpollReactor` on a thread of its own, `DispatchEpollReactor` from a Dispatch source over
    /// the set): the listener with EPOLLEXCLUSIVE (one loop wakes per new connection), each
    /// connection registered once for input, output and peer hang-up, and the loop's callbacks
    /// for a batch of ready events. Edge-triggered, so a connection reads until EAGAIN (or a short
    /// read) and the next byte or free buffer space brings a new event. The set's descriptor is
    /// closed by its reactor (Dispatch's only once its source is cancelled).
    /// Thread-confined: touched only on its loop's thread or queue.
    final class EpollSet {
        /// The listener's token in the set.
        private static let listenerToken = UInt64.max - 1
        /// The token of a reactor's own descriptor (its wake-up eventfd): `deliver` reports it
        /// back instead of handing it to the loop.
        static let reactorToken = UInt64.max
        /// Events taken per `wait`.
        static let maxEvents: Int32 = 256

        private unowned(unsafe) let loop: EventLoop
        /// The epoll descriptor.
        let fd: Int32
        private let events: UnsafeMutableRawPointer
        private var listenerWatched = false

        /// Creates the epoll instance; nothing is watched yet.
        init(loop: EventLoop) throws {
            self.loop = loop
            fd = Epoll.create()
            guard fd >= 0 else { throw SocketError.eventLoopFailed("epoll_create1: \(SocketError.errnoText)") }
            events = UnsafeMutableRawPointer.allocate(byteCount: Epoll.eventSize * Int(Self.maxEvents), alignment: 8)
        }

        deinit { events.deallocate() }

        /// Watches the listening socket.
        func watchListener() throws {
            guard addListener() else {
                throw SocketError.eventLoopFailed("epoll_ctl(listener): \(SocketError.errnoText)")
            }
        }

        private func addListener() -> Bool {
            listenerWatched =
                Epoll.control(
                    fd, Epoll.ctlAdd, loop.listener.fd, events: Epoll.input | Epoll.exclusive,
                    token: Self.listenerToken) == 0
            return listenerWatched
        }

        /// Stops watching the listener (it stays open).
        func removeListener() {
            if listenerWatched {
                listenerWatched = false
                _ = Epoll.control(fd, Epoll.ctlDel, loop.listener.fd, events: 0, token: 0)
            }
        }

        /// Watches the listener again after `removeListener`.
        func resumeListener() { if !listenerWatched { _ = addListener() } }

        /// Watches a connection for input, output and hang-up, edge-triggered.
        func watch(_ connection: Int32) -> Bool {
            let mask = Epoll.input | Epoll.output | Epoll.readHangUp | Epoll.edgeTriggered
            return Epoll.control(fd, Epoll.ctlAdd, connection, events: mask, token: UInt64(connection)) == 0
        }

        /// Watches a reactor's own descriptor for input under `reactorToken`.
        func watchReactorDescriptor(_ descriptor: Int32) {
            _ = Epoll.control(fd, Epoll.ctlAdd, descriptor, events: Epoll.input, token: Self.reactorToken)
        }

        /// Waits up to `timeoutMs` (0: not at all) for ready events; their count, or -1 (errno).
        @inline(__always)
        func wait(timeoutMs: Int32) -> Int32 { Epoll.wait(fd, events, Self.maxEvents, timeoutMs) }

        /// Hands the `count` events of the last `wait` to the loop: accepts on the listener, the rest
        /// to their connections. True when the reactor's own descriptor was among them. The reactor
        /// hands its loop in (a reference it holds while it runs): the set's own `unowned(unsafe)` one
        /// would be retained and released around every event (decision 041, round 9).
        @inline(__always)
        func deliver(_ count: Int32, to loop: EventLoop) -> Bool {
            var reactorReady = false
            var i = 0
            while i < Int(count) {
                let (mask, token) = Epoll.event(events, i)
                i += 1
                switch token {
                case Self.listenerToken:
                    loop.acceptConnections()
                case Self.reactorToken:
                    reactorReady = true
                default:
                    loop.connectionEvent(Int32(truncatingIfNeeded: token), Self.reactorEvents(mask))
                }
            }
            return reactorReady
        }

        /// What an epoll event mask means to a connection.
        @inline(__always)
        private static func reactorEvents(_ mask: UInt32) -> ReactorEvents {
            var events: ReactorEvents = []
            if mask & (Epoll.input | Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0 { events.insert(.readable) }
            if mask & (Epoll.output | Epoll.hangUp | Epoll.error) != 0 { events.insert(.writable) }
            if mask & (Epoll.readHangUp | Epoll.hangUp | Epoll.error) != 0 { events.insert(.hangUp) }
            return events
        }
    }

    /// A reactor whose sockets are in an `EpollSet`: the listener and the connections are
    /// registered there, edge-triggered, so a short read proves a socket empty and `interest` has
    /// nothing to do; a connection's descriptor closes at once (which also removes it from the set).
    protocol EpollSetReactor: Reactor {
        /// The loop's set.
        var epollSet: EpollSet { get }
        /// The loop, whose share of the listener `unwatchListener` gives back.
        var loop: EventLoop { get }
    }

    extension EpollSetReactor {
        var shortReadDrainsSocket: Bool { true }

        func watchListener() throws { try epollSet.watchListener() }

        func pauseListener() { epollSet.removeListener() }

        func resumeListener() { epollSet.resumeListener() }

        func unwatchListener() {
            epollSet.removeListener()
            loop.listener.release()
        }

        func watch(_ fd: Int32) -> Bool { epollSet.watch(fd) }

        @inline(__always)
        func interest(_ fd: Int32, read: Bool, write: Bool) {}

        var usesInterest: Bool { false }

        func unwatchAndClose(_ fd: Int32) { SystemCalls.close(fd) }
    }
#endif
