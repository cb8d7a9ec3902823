import Foundation
import HTTPServer
import Logging
import Postgres

/// The database's change sequence of each Parse class (migration 0010), and of each owner's photos
/// and each reader's galleries (0020), kept in memory so a conditional find or count is answered
/// 304 without a query.
///
/// A `PostgresListener` applies every `NOTIFY galleryd_class_changes` ("<Class> <seq>", sent at
/// commit). Each value held is one the database has committed, and values only grow, so a tag
/// built from them is never newer than the rows a query run afterwards sees. While the listener
/// is disconnected notifications are lost: the values are then *unknown* (`current` answers nil,
/// so no 304) from the moment the dead session is noticed until the table has been read again
/// after `LISTEN` is back in place. A refresh that began under an earlier session is discarded.
public final class ClassChangeSequences: Sendable {
    /// The `NOTIFY` channel the migration's triggers send on.
    public static let channel = "galleryd_class_changes"

    /// Minimum pause, in seconds, between the background refreshes a lookup starts while the
    /// values are unknown yet the listener is up (the read after reconnecting failed): the
    /// database is asked at most this often, never once per request.
    public static let retryInterval = 1.0

    private let pool: PostgresPool
    private let databaseURL: String
    private let logger: Logger
    /// Every conditional find and count reads the stamp from a handler thread: a sleeping lock, as
    /// the answer cache's (docs/decisions/053, 057).
    private let state = SleepingMutex(State())

    /// The sequences and the listener's standing, under the mutex.
    private struct State {
        var values: [String: Int64] = [:]
        /// The listener is connected and its `LISTEN` is in place.
        var listening = false
        /// `values` were read after the current session's `LISTEN` (and kept current since).
        var known = false
        /// Counts listener sessions (and losses), so a read begun under one session cannot vouch for another.
        var session: UInt64 = 0
        /// Moves on every change of `values` or `known`: equal stamps mean equal sequences (`stamp()`).
        var generation: UInt64 = 0
        /// The highest scope sequence a refresh has read: the next reads only rows above it.
        var scopesReadUpTo: Int64 = 0
        var lastRetry: Double = 0
        var retrying = false
        var listener: PostgresListener?

        /// A new listener session (connected or lost): nothing read before it vouches for the values.
        mutating func newSession(listening: Bool) {
            session &+= 1
            self.listening = listening
            known = false
            generation &+= 1
        }
    }

    /// Sequences read through `pool`, listened to on a connection of its own to `databaseURL`.
    public init(pool: PostgresPool, databaseURL: String, logger: Logger) {
        self.pool = pool
        self.databaseURL = databaseURL
        self.logger = logger
    }

    /// The classes whose changes can alter a find or count of `className`: a Photo page reads
    /// photos only; a Gallery (its cover photo is its first live item's photo) and a GalleryItem
    /// (hidden when its photo or gallery is trashed, `include` expands them) read all three.
    public static func dependencies(of className: String) -> [String] {
        className == "Photo" ? ["Photo"] : ["Gallery", "GalleryItem", "Photo"]
    }

    /// The sequences whose changes can alter what `access` reads of `className`, and nothing else,
    /// so a tag does not move with another user's writes (migration 0020): a user's Photo find
    /// reads their own photos and those shared with them (`Photo:<id>`, `Photo:*`,
    /// `Photo:role:<Name>`, migration 0022); their Gallery and GalleryItem finds read the
    /// galleries they own or are granted, and public ones, with those galleries' items and photos
    /// (`Reader:<id>`, `Reader:*`, `Reader:role:<Name>`). A caller without a session reads public galleries, and
    /// ownerless rows while no account exists (`Photo:`, `Reader:`, `Accounts`). The master key
    /// reads across owners and keeps the class-wide sequences (`dependencies(of:)`), as do
    /// finds of other classes (`_User`).
    public static func dependencies(of className: String, for access: ParseAccess) -> [String] {
        guard ["Photo", "Gallery", "GalleryItem"].contains(className) else { return dependencies(of: className) }
        switch access.caller {
        case .master:
            return dependencies(of: className)
        case .user:
            // Their own rows and those granted to them as themselves, `*` or one of their roles.
            let prefix = className == "Photo" ? "Photo:" : "Reader:"
            return access.principals.map { prefix + $0 }
        case .anonymous:
            return className == "Photo"
                ? ["Photo:", "Accounts"] + (access.publicRead ? ["Photo:*"] : []) : ["Reader:", "Reader:*", "Accounts"]
        }
    }

    /// Starts the listener (after the migrations, which create the table). Safe to call once.
    public func start(settings: PostgresListenerSettings = PostgresListenerSettings()) {
        let listener = PostgresListener(
            url: databaseURL, channels: [Self.channel], settings: settings,
            onListen: { [weak self] in self?.listenerConnected() },
            onUnlisten: { [weak self] in self?.listenerLost() }
        ) { [weak self] _, payload in
            self?.apply(payload)
        }
        state.withLock { $0.listener = listener }
    }

    /// Stops the listener; the values are unknown from then on.
    public func stop() {
        state.withLock { $0.listener }?.stop()
        listenerLost()
    }

    /// The current sequences of `classes`, in that order, or nil while they are unknown.
    public func current(_ classes: [String]) -> [Int64]? {
        currentStamped(classes)?.sequences
    }

    /// The current sequences of `classes` and the stamp they were read under, in one look, or nil
    /// while they are unknown: a tag made from these sequences holds for as long as `stamp()` is
    /// the same.
    public func currentStamped(_ classes: [String]) -> (sequences: [Int64], stamp: UInt64)? {
        whenKnown { state in (classes.map { state.values[$0] ?? 0 }, state.generation) }
    }

    /// A number that changes whenever any sequence changes or they become unknown, or nil while
    /// they are unknown: what a revalidation compares, without reading (or allocating) the sequences.
    public func stamp() -> UInt64? {
        whenKnown { $0.generation }
    }

    /// `read` under the lock while the values are known; else nil, and a background refresh
    /// started at most once per `retryInterval` while the listener is up.
    private func whenKnown<Value: Sendable>(_ read: (State) -> Value) -> Value? {
        let (result, startRetry) = state.withLock { state -> (Value?, Bool) in
            if state.known { return (read(state), false) }
            let now = Date().timeIntervalSinceReferenceDate
            if state.listening && !state.retrying && now - state.lastRetry >= Self.retryInterval {
                state.retrying = true
                state.lastRetry = now
                return (nil, true)
            }
            return (nil, false)
        }
        if startRetry {
            DispatchQueue.global().async { [self] in
                try? refresh()
                state.withLock { $0.retrying = false }
            }
        }
        return result
    }

    /// Whether the values are known (the listener is up and has caught up).
    public var isKnown: Bool { state.withLock { $0.known } }

    /// Reads the table and merges it in: called after each write this server makes, so its own
    /// writes show at once (their notifications are delivered a moment after the commit), and
    /// after reconnecting. Makes the values known only if the listener was listening throughout.
    public func refresh() throws {
        let started = state.withLock { ($0.session, $0.listening, $0.scopesReadUpTo) }
        let repository = ChangeSequenceRepository(pool: pool)
        let read = try repository.all()
        let scopes = try repository.scopes(after: started.2)
        state.withLock { state in
            guard started.1, state.listening, state.session == started.0 else { return }
            for (name, seq) in read { state.values[name] = max(state.values[name] ?? 0, seq) }
            for (name, seq) in scopes.values { state.values[name] = max(state.values[name] ?? 0, seq) }
            state.scopesReadUpTo = max(state.scopesReadUpTo, scopes.highest)
            state.known = true
            state.generation &+= 1
        }
    }

    /// After a write through this server, once it is committed (`PostgresPool.afterCommit`): reads
    /// the sequences, so the writer's next conditional find sees its own change even before the
    /// change's notification has arrived. Called by the services that write, so no route can forget
    /// it. After a failed read the sequences are unknown (no tags, no 304s, no kept answers) until a
    /// read succeeds.
    public func refreshAfterWrite() {
        pool.afterCommit { [self] in
            do {
                try refresh()
            } catch {
                forgetUntilRefreshed()
                logger.notice("class change sequences not re-read after a write", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Makes the values unknown until a refresh succeeds (the lookups retry it in the background,
    /// at most once per `retryInterval`): after a write through this server whose re-read failed,
    /// the values held may predate the write, and a tag made from them could answer for the old page.
    public func forgetUntilRefreshed() {
        state.withLock { state in
            state.session &+= 1
            state.known = false
            state.generation &+= 1
        }
    }

    /// The listener is listening again: a new session, unknown until the table has been read.
    private func listenerConnected() {
        state.withLock { $0.newSession(listening: true) }
        // On the listener's thread: notifications wait in the socket until this returns, and
        // anything committed after the read below is notified (LISTEN came first).
        var pause = 0.05
        for attempt in 1...6 {
            do {
                try refresh()
                return
            } catch {
                if attempt == 6 {
                    logger.warning(
                        "cannot read the class change sequences; no 304s until they are",
                        metadata: ["error": "\(error)"])
                    return
                }
                Thread.sleep(forTimeInterval: pause)
                pause *= 2
            }
        }
    }

    /// The session died: notifications may be lost from now on.
    private func listenerLost() {
        state.withLock { $0.newSession(listening: false) }
    }

    /// A notification "<Class> <seq>".
    private func apply(_ payload: String) {
        guard let space = payload.lastIndex(of: " "), let seq = Int64(payload[payload.index(after: space)...]) else {
            logger.warning("malformed class change notification", metadata: ["payload": "\(payload.prefix(100))"])
            return
        }
        let name = String(payload[..<space])
        state.withLock { state in
            guard state.listening else { return }
            state.values[name] = max(state.values[name] ?? 0, seq)
            state.generation &+= 1
        }
    }
}
