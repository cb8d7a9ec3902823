import Foundation
import HTTPServer
import Logging

/// One LiveQuery WebSocket client: its `connect`, its subscriptions, and the events sent to it.
/// Messages arrive on the connection's event loop and are handled, in order, on the client's own
/// queue (a session token may need a database lookup); events are matched on the listener thread;
/// the lock keeps the subscriptions consistent between them. A socket that has not sent `connect`
/// within `limits.connectTimeout` is closed; it holds at most `limits.maxSubscriptions`, each
/// `where` within the REST caps; a subscription made with a session ends when the session does.
final class LiveQueryClient: WebSocketHandler, @unchecked Sendable {
    /// The id sent in `connected` and every event.
    let clientId: Int
    private let keys: KeyChecker
    private let sessions: SessionAuthenticator?
    private let publicRead: Bool
    private let limits: LiveQueryLimits
    private let queue: DispatchQueue
    /// The caller `connect` established (its keys and `sessionToken`).
    private var access = ParseAccess(caller: .anonymous)
    /// The hash of `connect`'s session token, while that session lasts.
    private var accessSessionHash: String?
    /// The sessions whose expiry is timed already (one timer per session, however often it subscribes).
    private var timedSessions: Set<String> = []
    private let logger: Logger
    private let onClose: @Sendable (LiveQueryClient) -> Void
    private let lock = NSLock()
    private var connected = false
    private var subscriptions: [Int: LiveQuerySubscription] = [:]
    private var socket: WebSocket?

    init(
        clientId: Int, keys: KeyChecker, sessions: SessionAuthenticator? = nil, publicRead: Bool = false,
        limits: LiveQueryLimits = LiveQueryLimits(),
        logger: Logger, onClose: @escaping @Sendable (LiveQueryClient) -> Void
    ) {
        self.clientId = clientId
        self.keys = keys
        self.sessions = sessions
        self.publicRead = publicRead
        self.limits = limits
        self.queue = DispatchQueue(label: "galleryd.livequery.client.\(clientId)")
        self.logger = logger
        self.onClose = onClose
    }

    func opened(_ socket: WebSocket) {
        lock.withLock { self.socket = socket }
        queue.asyncAfter(deadline: .now() + limits.connectTimeout) { [weak self] in
            guard let self, !self.lock.withLock({ self.connected }) else { return }
            self.logger.notice("live query socket closed: no connect in time", metadata: ["client": "\(self.clientId)"])
            self.send(error: LiveQueryError(1, "connect was not sent within \(Int(self.limits.connectTimeout)) s"), requestId: nil)
            socket.close(.policyViolation)
        }
    }

    func received(binary: [UInt8], on socket: WebSocket) {
        send(error: .badMessage("LiveQuery messages are JSON text"), requestId: nil)
    }

    func received(text: String, on socket: WebSocket) {
        queue.async { self.handle(text) }
    }

    private func handle(_ text: String) {
        var requestId: Int?
        do {
            guard let data = text.data(using: .utf8),
                let message = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            else { throw LiveQueryError.badMessage("message is not a JSON object") }
            requestId = (message["requestId"] as? NSNumber)?.intValue
            switch message["op"] as? String {
            case "connect": try connect(message)
            case "subscribe", "update": try subscribe(message)
            case "unsubscribe": try unsubscribe(message)
            default: throw LiveQueryError.badMessage("unknown op \(message["op"] ?? "(none)")")
            }
        } catch let error as LiveQueryError {
            logger.notice("live query refused: \(error.message)", metadata: ["client": "\(clientId)", "code": "\(error.code)"])
            send(error: error, requestId: requestId)
        } catch {
            send(error: .badMessage("bad message"), requestId: requestId)
        }
    }

    func closed(_ socket: WebSocket, code: WebSocketCloseCode) {
        lock.withLock {
            self.socket = nil
            subscriptions = [:]
        }
        onClose(self)
    }

    /// `connect`: the keys are checked like REST headers (applicationId, then the REST,
    /// JavaScript or client key when one is configured, or the master key).
    private func connect(_ message: [String: Any]) throws {
        let presented = KeyChecker.Keys(
            appID: message["applicationId"] as? String,
            restKey: (message["restAPIKey"] ?? message["javascriptKey"] ?? message["clientKey"]) as? String,
            masterKey: message["masterKey"] as? String)
        let level = keys.access(presented)
        guard level > .none else { throw LiveQueryError.badKeys() }
        let (access, sessionHash) = try self.access(level: level, sessionToken: message["sessionToken"] as? String)
        lock.withLock {
            connected = true
            self.access = access
            accessSessionHash = sessionHash
        }
        send(["op": "connected", "clientId": clientId])
    }

    private func subscribe(_ message: [String: Any]) throws {
        guard lock.withLock({ connected }) else { throw LiveQueryError.notConnected() }
        guard let requestId = (message["requestId"] as? NSNumber)?.intValue else { throw LiveQueryError.badMessage("requestId is required") }
        guard let query = message["query"] as? [String: Any], let className = query["className"] as? String else {
            throw LiveQueryError.badMessage("query.className is required")
        }
        guard let schema = ParseClassSchema.named(className) else { throw LiveQueryError.invalidQuery("no class \(className)") }
        let whereObject = query["where"] as? [String: Any] ?? [:]
        try LiveQueryMatcher.check(whereObject, limits: limits.query)
        let matcher = try LiveQueryMatcher.compile(whereObject, schema: schema)
        var keySet: Set<String>?
        if let keys = query["keys"] as? [String] {
            for key in keys where schema.field(named: key) == nil { throw LiveQueryError.invalidQuery("no field \(className).\(key)") }
            keySet = Set(keys)
        }
        let isUpdate = message["op"] as? String == "update"
        // A subscription's own sessionToken (Parse LiveQuery lets each carry one) beats connect's.
        var (access, sessionHash) = lock.withLock { (self.access, accessSessionHash) }
        if let token = message["sessionToken"] as? String, !access.caller.isMaster {
            (access, sessionHash) = try self.access(level: .client, sessionToken: token)
        }
        // Without a session only what the access rules let it read.
        if !LiveQuerySubscription.mayEverRead(className, by: access) {
            throw LiveQueryError(
                ParseError.Code.operationForbidden, "Permission denied: subscribing to \(className) needs a sessionToken.")
        }
        let subscription = LiveQuerySubscription(
            requestId: requestId, schema: schema, matcher: matcher, keys: keySet, access: access, sessionHash: sessionHash)
        try lock.withLock {
            // Replacing one (`update`, or the same requestId) does not add to the count.
            guard subscriptions[requestId] != nil || subscriptions.count < limits.maxSubscriptions else {
                throw LiveQueryError(155, "A socket may hold at most \(limits.maxSubscriptions) subscriptions; unsubscribe one first.")
            }
            subscriptions[requestId] = subscription
        }
        send(["op": isUpdate ? "updated" : "subscribed", "clientId": clientId, "requestId": requestId])
    }

    /// The access of keys granting `level` with an optional session token (209 for a bad one), and
    /// the token's hash when a session grants it; the session's expiry is timed from here.
    private func access(level: KeyChecker.Access, sessionToken: String?) throws -> (ParseAccess, String?) {
        if level == .master { return (.master, nil) }
        guard let sessionToken else { return (ParseAccess(caller: .anonymous, publicRead: publicRead), nil) }
        guard let sessions else { throw LiveQueryError.invalidSessionToken() }
        do {
            let token = SessionToken(sessionToken)
            let session = try sessions.liveSession(for: token)
            let hash = token.hash
            if lock.withLock({ timedSessions.insert(hash).inserted }) {
                queue.asyncAfter(deadline: .now() + max(0, session.expiresAt.timeIntervalSinceNow)) { [weak self] in
                    self?.sessionEnded(tokenHash: hash)
                }
            }
            return (try sessions.roles.access(for: .user(objectId: session.userId), publicRead: publicRead), hash)
        } catch let error as ParseError where error.code == ParseError.Code.invalidSessionToken {
            throw LiveQueryError.invalidSessionToken()
        } catch {
            throw LiveQueryError(1, "The session could not be checked (database unavailable); try again.")
        }
    }

    private func unsubscribe(_ message: [String: Any]) throws {
        guard let requestId = (message["requestId"] as? NSNumber)?.intValue else { throw LiveQueryError.badMessage("requestId is required") }
        let removed = lock.withLock { subscriptions.removeValue(forKey: requestId) }
        guard removed != nil else { throw LiveQueryError(2, "Can not find subscription \(requestId)") }
        send(["op": "unsubscribed", "clientId": clientId, "requestId": requestId])
    }

    /// The session whose token hashes to `tokenHash` ended (logout, password change, revocation,
    /// account deletion, expiry): the subscriptions it granted end with an error frame (209) each,
    /// and `connect`'s access falls back to no session when it was that one.
    func sessionEnded(tokenHash: String) {
        let ended = lock.withLock { () -> [Int] in
            let ids = subscriptions.values.filter { $0.sessionHash == tokenHash }.map(\.requestId)
            for id in ids { subscriptions.removeValue(forKey: id) }
            if accessSessionHash == tokenHash {
                access = ParseAccess(caller: .anonymous, publicRead: publicRead)
                accessSessionHash = nil
            }
            return ids.sorted()
        }
        guard !ended.isEmpty else { return }
        logger.notice("live query subscriptions ended with their session", metadata: ["client": "\(clientId)", "count": "\(ended.count)"])
        for requestId in ended {
            send(
                error: LiveQueryError(209, "The session ended (logout, password change, expiry or account deletion); subscribe again with a valid session."),
                requestId: requestId)
        }
    }

    /// Sends what the event means to each matching subscription; returns how many messages went out.
    @discardableResult
    func deliver(_ rendering: LiveQueryRendering, of event: LiveQueryEvent) -> Int {
        let (current, socket) = lock.withLock { (Array(subscriptions.values), self.socket) }
        guard let socket else { return 0 }
        var sent = 0
        for subscription in current {
            guard let text = subscription.message(for: event, rendering: rendering, clientId: clientId) else { continue }
            socket.send(text: text)
            sent += 1
        }
        return sent
    }

    private func send(error: LiveQueryError, requestId: Int?) {
        var message: [String: Any] = ["op": "error", "code": error.code, "error": error.message, "reconnect": false]
        if lock.withLock({ connected }) { message["clientId"] = clientId }
        if let requestId { message["requestId"] = requestId }
        send(message)
    }

    private func send(_ message: [String: Any]) {
        guard let socket = lock.withLock({ self.socket }),
            let data = try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys]),
            let text = String(data: data, encoding: .utf8)
        else { return }
        socket.send(text: text)
    }
}
