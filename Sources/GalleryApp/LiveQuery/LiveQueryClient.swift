import Foundation
import HTTPServer
import Logging
import Synchronization

/// One LiveQuery WebSocket client: its `connect`, its subscriptions, and the events sent to it.
/// Messages arrive on the connection's event loop and are handled, in order, on the client's own
/// queue (a session token may need a database lookup); events are matched on the listener thread;
/// the mutex keeps the subscriptions consistent between them. A socket that has not sent `connect`
/// within `limits.connectTimeout` is closed; it holds at most `limits.maxSubscriptions`, each
/// `where` within the REST caps; a subscription made with a session ends when the session does.
final class LiveQueryClient: WebSocketHandler, Sendable {
    /// The id sent in `connected` and every event.
    let clientId: Int
    private let keys: KeyChecker
    private let sessions: SessionAuthenticator?
    private let publicRead: Bool
    private let limits: LiveQueryLimits
    private let queue: DispatchQueue
    private let logger: Logger
    private let onClose: @Sendable (LiveQueryClient) -> Void
    /// The built-in classes' class-level permissions (find, `protectedFields`), checked on subscribe.
    private let permissions: BuiltInClassPermissions?
    /// The custom class of a name, or nil.
    private let customClasses: @Sendable (String) -> CustomClass?
    /// The view (`[[views]]`) of a name with its permissions as they are now, or nil.
    private let views: @Sendable (String) -> PhotoView?
    /// A built-in class's schema with the fields an app added to it (`BuiltInAppFields`).
    private let appFields: @Sendable (ParseClassSchema) -> ParseClassSchema
    private let state = Mutex(State())

    /// What the loop, the client's queue and the listener thread share, under the mutex.
    private struct State {
        /// The caller `connect` established (its keys and `sessionToken`).
        var access = ParseAccess(caller: .anonymous)
        /// The hash of `connect`'s session token, while that session lasts.
        var accessSessionHash: String?
        /// The sessions whose expiry is timed already (one timer per session, however often it subscribes).
        var timedSessions: Set<String> = []
        var connected = false
        var subscriptions: [Int: LiveQuerySubscription] = [:]
        var socket: WebSocket?
    }

    init(
        clientId: Int, keys: KeyChecker, sessions: SessionAuthenticator? = nil, publicRead: Bool = false,
        limits: LiveQueryLimits = LiveQueryLimits(), permissions: BuiltInClassPermissions? = nil,
        logger: Logger, customClasses: @escaping @Sendable (String) -> CustomClass? = { _ in nil },
        views: @escaping @Sendable (String) -> PhotoView? = { _ in nil },
        appFields: @escaping @Sendable (ParseClassSchema) -> ParseClassSchema = { $0 },
        onClose: @escaping @Sendable (LiveQueryClient) -> Void
    ) {
        self.appFields = appFields
        self.permissions = permissions
        self.customClasses = customClasses
        self.views = views
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
        state.withLock { $0.socket = socket }
        queue.asyncAfter(deadline: .now() + limits.connectTimeout) { [weak self] in
            guard let self, !self.state.withLock({ $0.connected }) else { return }
            self.logger.notice("live query socket closed: no connect in time", metadata: ["client": "\(self.clientId)"])
            self.send(
                error: LiveQueryError(1, "connect was not sent within \(Int(self.limits.connectTimeout)) s"),
                requestId: nil)
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
            logger.notice(
                "live query refused: \(error.message)", metadata: ["client": "\(clientId)", "code": "\(error.code)"])
            send(error: error, requestId: requestId)
        } catch {
            send(error: .badMessage("bad message"), requestId: requestId)
        }
    }

    func closed(_ socket: WebSocket, code: WebSocketCloseCode) {
        state.withLock { state in
            state.socket = nil
            state.subscriptions = [:]
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
        state.withLock { state in
            state.connected = true
            state.access = access
            state.accessSessionHash = sessionHash
        }
        send(["op": "connected", "clientId": clientId])
    }

    private func subscribe(_ message: [String: Any]) throws {
        guard state.withLock({ $0.connected }) else { throw LiveQueryError.notConnected() }
        guard let requestId = (message["requestId"] as? NSNumber)?.intValue else {
            throw LiveQueryError.badMessage("requestId is required")
        }
        guard let query = message["query"] as? [String: Any], let className = query["className"] as? String else {
            throw LiveQueryError.badMessage("query.className is required")
        }
        // As the class routes resolve a name: built in, then a view (of Photo), then custom.
        let builtIn = ParseClassSchema.builtIn(named: className).map(appFields)
        let view = builtIn == nil ? views(className) : nil
        let custom = builtIn == nil && view == nil ? customClasses(className) : nil
        guard let schema = builtIn ?? view.map({ _ in ParseClassSchema.photo }) ?? custom?.schema else {
            throw LiveQueryError.invalidQuery("no class \(className)")
        }
        var whereObject = query["where"] as? [String: Any] ?? [:]
        try LiveQueryMatcher.check(whereObject, limits: limits.query)
        var keySet: Set<String>?
        var viewSelection: PhotoView.LiveSelection?
        if let view {
            // The view's names become Photo's; Photo's own names are unknown here (102).
            do {
                let live = try view.live(where: whereObject, keys: query["keys"] as? [String], limits: limits.query)
                whereObject = live.where
                viewSelection = live.selection
                keySet = live.selection.photoKeys
            } catch let error as ParseError {
                throw LiveQueryError(error.code, error.message)
            }
        } else if let keys = query["keys"] as? [String] {
            for key in keys where schema.field(named: key) == nil {
                throw LiveQueryError.invalidQuery("no field \(className).\(key)")
            }
            keySet = Set(keys)
        }
        let matcher = try LiveQueryMatcher.compile(whereObject, schema: schema)
        let isUpdate = message["op"] as? String == "update"
        // A subscription's own sessionToken (Parse LiveQuery lets each carry one) beats connect's.
        var (access, sessionHash) = state.withLock { ($0.access, $0.accessSessionHash) }
        if let token = message["sessionToken"] as? String, !access.caller.isMaster {
            (access, sessionHash) = try self.access(level: .client, sessionToken: token)
        }
        if let custom {
            // A custom class: its `find` permission, now (each event checks it again).
            do {
                try custom.permissions.require(
                    .find, on: className, caller: access.caller, roles: CustomObjectService.roles(of: access))
            } catch let error as ParseError {
                throw LiveQueryError(error.code, error.message)
            }
        } else if !LiveQuerySubscription.mayEverRead(view == nil ? className : "Photo", by: access) {
            // Without a session only what the access rules let it read.
            throw LiveQueryError(
                ParseError.Code.operationForbidden,
                "Permission denied: subscribing to \(className) needs a sessionToken.")
        }
        // The class-level permissions, as a find's (`ParseClass.authorize`): `find`, then the
        // protected fields left out of every event but on the rows that name the caller, and
        // never matched on (which would tell them).
        var revealedBy: [String: [String]] = [:]
        if let view {
            // A view's own permissions: `find` now, and again at every event (`deliver`).
            do {
                try view.permissions.require(
                    .find, on: className, caller: access.caller, roles: CustomObjectService.roles(of: access))
            } catch let error as ParseError {
                throw LiveQueryError(error.code, error.message)
            }
        } else if let permissions = try custom?.permissions ?? permissions?.permissions(of: className),
            permissions != .public, permissions != .builtInDefault
        {
            let roles = Set(access.roleNames)
            do {
                _ = try permissions.grant(.find, on: className, caller: access.caller, roles: roles)
            } catch let error as ParseError {
                throw LiveQueryError(error.code, error.message)
            }
            let hidden = permissions.hiddenFields(caller: access.caller, roles: roles)
            if let name = LiveQuerySubscription.fieldNames(of: whereObject).intersection(hidden).sorted().first {
                throw LiveQueryError(
                    ParseError.Code.operationForbidden,
                    "This user is not allowed to query \(name) on class \(className)")
            }
            if !hidden.isEmpty {
                let requested = keySet ?? Set(schema.fields.map(\.name))
                keySet = requested.subtracting(hidden)
                // Shown again on the rows that name the caller, as a find shows them.
                revealedBy = ParseClass.revealedBy(hidden, permissions, in: schema, caller: access.caller).filter {
                    requested.contains($0.key)
                }
            }
        }
        var subscription = LiveQuerySubscription(
            requestId: requestId, schema: schema, matcher: matcher, keys: keySet, access: access,
            sessionHash: sessionHash, view: viewSelection)
        subscription.revealedBy = revealedBy
        try state.withLock { state in
            // Replacing one (`update`, or the same requestId) does not add to the count.
            guard state.subscriptions[requestId] != nil || state.subscriptions.count < limits.maxSubscriptions else {
                throw LiveQueryError(
                    155, "A socket may hold at most \(limits.maxSubscriptions) subscriptions; unsubscribe one first.")
            }
            state.subscriptions[requestId] = subscription
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
            if state.withLock({ $0.timedSessions.insert(hash).inserted }) {
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
        guard let requestId = (message["requestId"] as? NSNumber)?.intValue else {
            throw LiveQueryError.badMessage("requestId is required")
        }
        let removed = state.withLock { $0.subscriptions.removeValue(forKey: requestId) }
        guard removed != nil else { throw LiveQueryError(2, "Can not find subscription \(requestId)") }
        send(["op": "unsubscribed", "clientId": clientId, "requestId": requestId])
    }

    /// The session whose token hashes to `tokenHash` ended (logout, password change, revocation,
    /// account deletion, expiry): the subscriptions it granted end with an error frame (209) each,
    /// and `connect`'s access falls back to no session when it was that one.
    func sessionEnded(tokenHash: String) {
        let ended = state.withLock { state -> [Int] in
            let ids = state.subscriptions.values.filter { $0.sessionHash == tokenHash }.map(\.requestId)
            for id in ids { state.subscriptions.removeValue(forKey: id) }
            if state.accessSessionHash == tokenHash {
                state.access = ParseAccess(caller: .anonymous, publicRead: publicRead)
                state.accessSessionHash = nil
            }
            return ids.sorted()
        }
        guard !ended.isEmpty else { return }
        logger.notice(
            "live query subscriptions ended with their session",
            metadata: ["client": "\(clientId)", "count": "\(ended.count)"])
        for requestId in ended {
            send(
                error: LiveQueryError(
                    209,
                    "The session ended (logout, password change, expiry or account deletion); subscribe again with a valid session."
                ),
                requestId: requestId)
        }
    }

    /// Sends what the event means to each matching subscription; returns how many messages went out.
    @discardableResult
    func deliver(_ rendering: LiveQueryRendering, of event: LiveQueryEvent) -> Int {
        let (current, socket) = state.withLock { (Array($0.subscriptions.values), $0.socket) }
        guard let socket else { return 0 }
        var sent = 0
        for subscription in current {
            if let view = subscription.view, !mayStillFind(view.className, subscription.access) { continue }
            guard let text = subscription.message(for: event, rendering: rendering, clientId: clientId) else {
                continue
            }
            socket.send(text: text)
            sent += 1
        }
        return sent
    }

    /// Whether the caller of a view subscription may still find the view: its permissions may
    /// have changed since `subscribe` (as a custom class's are checked at each event).
    private func mayStillFind(_ viewName: String, _ access: ParseAccess) -> Bool {
        access.caller.isMaster
            || views(viewName)?.permissions.allows(
                .find, userId: access.caller.userId, roles: CustomObjectService.roles(of: access)) == true
    }

    private func send(error: LiveQueryError, requestId: Int?) {
        var message: [String: Any] = ["op": "error", "code": error.code, "error": error.message, "reconnect": false]
        if state.withLock({ $0.connected }) { message["clientId"] = clientId }
        if let requestId { message["requestId"] = requestId }
        send(message)
    }

    private func send(_ message: [String: Any]) {
        guard let socket = state.withLock({ $0.socket }),
            let data = try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys]),
            let text = String(data: data, encoding: .utf8)
        else { return }
        socket.send(text: text)
    }
}
