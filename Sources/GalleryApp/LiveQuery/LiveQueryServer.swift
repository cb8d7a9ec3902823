import Foundation
import HTTPServer
import Logging
import Postgres
import Synchronization

/// Parse LiveQuery over WebSocket: accepts upgrades at `path`, keeps the connected clients, and
/// fans out the changes the database announces on `galleryd_live` (migration 0011) to the
/// subscriptions they match. One LISTEN connection per instance; `where` is evaluated here. The
/// same connection hears `galleryd_sessions` (migration 0019): a session deleted by any instance
/// ends the subscriptions its token made here and leaves this instance's session cache at once.
/// Each client address may hold `limits.maxSocketsPerAddress` sockets at once.
public final class LiveQueryServer: Sendable {
    /// The NOTIFY channel the trigger uses.
    public static let channel = "galleryd_live"
    /// The NOTIFY channel of ended sessions (their token hashes).
    public static let sessionChannel = "galleryd_sessions"
    /// Where clients connect (`ws://host/parse`, as Parse SDKs do by default).
    public let path: String
    private let keys: KeyChecker
    private let logger: Logger
    private let databaseURL: String
    private let encoder: @Sendable () -> ParseObjectEncoder
    private let limits: LiveQueryLimits
    private let state = Mutex(State())

    /// The connected clients and the listener, under the mutex.
    private struct State {
        var clients: [Int: LiveQueryClient] = [:]
        var socketsByAddress: [String: Int] = [:]
        var lastClientId = 0
        var listener: PostgresListener?
        var delivered = 0
    }

    private let sessions: SessionAuthenticator?
    private let publicRead: Bool
    /// The built-in classes' class-level permissions, checked on subscribe.
    private let permissions: BuiltInClassPermissions?
    /// The custom class of a name, or nil (subscriptions and events of custom classes).
    private let customClasses: @Sendable (String) -> CustomClass?
    /// The view of a name, or nil (subscriptions to views receive Photo's events).
    private let views: @Sendable (String) -> PhotoView?
    /// A built-in class's schema with the fields an app added to it (`BuiltInAppFields`).
    private let appFields: @Sendable (ParseClassSchema) -> ParseClassSchema

    /// A server for `path`; nothing listens until `start`. Subscribers' session tokens are
    /// resolved by `sessions` (without it every non-master subscriber reads as no session).
    init(
        path: String, keys: KeyChecker, sessions: SessionAuthenticator? = nil, publicRead: Bool = false,
        limits: LiveQueryLimits = LiveQueryLimits(), permissions: BuiltInClassPermissions? = nil,
        databaseURL: String, logger: Logger, encoder: @escaping @Sendable () -> ParseObjectEncoder,
        customClasses: @escaping @Sendable (String) -> CustomClass? = { _ in nil },
        views: @escaping @Sendable (String) -> PhotoView? = { _ in nil },
        appFields: @escaping @Sendable (ParseClassSchema) -> ParseClassSchema = { $0 }
    ) {
        self.appFields = appFields
        self.permissions = permissions
        self.customClasses = customClasses
        self.views = views
        self.path = path
        self.limits = limits
        self.keys = keys
        self.sessions = sessions
        self.publicRead = publicRead
        self.databaseURL = databaseURL
        self.logger = logger
        self.encoder = encoder
    }

    /// The number of connected clients.
    public var clientCount: Int { state.withLock { $0.clients.count } }

    /// The number of event messages sent since start.
    public var eventsDelivered: Int { state.withLock { $0.delivered } }

    /// The route that upgrades to LiveQuery; a plain GET gets a Parse JSON 400.
    func route() -> HTTPRoute {
        HTTPRoute(
            .get, path, mayBlock: false,
            webSocket: { [weak self] request in
                guard let self else {
                    throw ParseError(code: ParseError.Code.internalServerError, message: "shutting down")
                }
                return try self.makeClient(address: LoginThrottle.host(request.remoteAddress) ?? "")
            },
            handler: HTTPClosureHandler { _ in
                throw ParseError(
                    code: ParseError.Code.invalidJSON,
                    message: "LiveQuery needs a WebSocket upgrade (Upgrade: websocket)")
            })
    }

    /// A client for a socket from `address`, or 429 (Parse code 155) when the address holds its
    /// `maxSocketsPerAddress` already.
    private func makeClient(address: String) throws -> LiveQueryClient {
        try state.withLock { state in
            let open = state.socketsByAddress[address] ?? 0
            guard limits.maxSocketsPerAddress == 0 || open < limits.maxSocketsPerAddress else {
                throw ParseError(
                    code: ParseError.Code.requestLimitExceeded,
                    message:
                        "Too many LiveQuery connections from this address (at most \(limits.maxSocketsPerAddress)).")
            }
            state.socketsByAddress[address] = open + 1
            state.lastClientId += 1
            let client = LiveQueryClient(
                clientId: state.lastClientId, keys: keys, sessions: sessions, publicRead: publicRead, limits: limits,
                permissions: permissions, logger: logger, customClasses: customClasses, views: views,
                appFields: appFields
            ) { [weak self] client in self?.closed(client, address: address) }
            state.clients[client.clientId] = client
            return client
        }
    }

    private func closed(_ client: LiveQueryClient, address: String) {
        state.withLock { state in
            guard state.clients.removeValue(forKey: client.clientId) != nil else { return }
            let left = (state.socketsByAddress[address] ?? 1) - 1
            state.socketsByAddress[address] = left > 0 ? left : nil
        }
    }

    /// Starts listening for changes.
    public func start() {
        let listener = PostgresListener(url: databaseURL, channels: [Self.channel, Self.sessionChannel]) {
            [weak self] channel, payload in
            if channel == Self.sessionChannel {
                self?.sessionEnded(tokenHash: payload)
            } else {
                self?.dispatch(payload)
            }
        }
        state.withLock { $0.listener = listener }
    }

    /// Waits until the LISTEN is in place (tests, benchmarks); returns whether it is.
    @discardableResult
    public func waitUntilListening(timeout: Double) -> Bool {
        state.withLock { $0.listener }?.waitUntilListening(timeout: timeout) ?? false
    }

    /// Stops listening.
    public func stop() {
        let listener = state.withLock { state in
            defer { state.listener = nil }
            return state.listener
        }
        listener?.stop()
    }

    /// A session ended somewhere (any instance): its token leaves the session cache, and the
    /// subscriptions it made here end.
    func sessionEnded(tokenHash: String) {
        sessions?.forget(hash: tokenHash)
        let current = state.withLock { Array($0.clients.values) }
        for client in current { client.sessionEnded(tokenHash: tokenHash) }
    }

    /// One notification: decoded once, matched against every subscription.
    func dispatch(_ payload: String) {
        let (event, problem) = LiveQueryEvent.decode(payload, customClasses: customClasses, appFields: appFields)
        guard let event else {
            logger.warning("live query event skipped: \(problem ?? "")")
            return
        }
        let current = state.withLock { Array($0.clients.values) }
        guard !current.isEmpty else { return }
        let rendering = LiveQueryRendering(event: event, encoder: encoder())
        var sent = 0
        for client in current { sent += client.deliver(rendering, of: event) }
        state.withLock { $0.delivered += sent }
    }
}
