import Crypto
import Foundation
import HTTPServer

/// Parse's user and session routes under the mount path (Parse Server's UsersRouter and
/// SessionsRouter): sign-up, login, logout, `users/me`, a user by id (self or master key), and the
/// caller's sessions, finding users (`GET /users?where=…`); `_User` is reachable as
/// `/classes/_User` too, the way the SDKs address it.
/// The session token comes from `X-Parse-Session-Token` or a body's `_SessionToken`.
struct UserRoutes {
    let accounts: AccountService
    let authenticator: SessionAuthenticator
    let keys: KeyChecker
    /// Finds users (`ParseAPI.findUsers`) with the classes' query language.
    let api: ParseAPI
    /// `public_read`: whether a request without a session may list users (without their email).
    let publicRead: Bool
    let mountPath: String
    let maxJSONDepth: Int
    /// The server's base URL, for the `Location` of a sign-up.
    let publicURL: @Sendable () -> String

    /// One request as these routes read it: its keys, session token and body fields.
    struct Call {
        let request: HTTPRequest
        /// The body's members without the SDKs' bookkeeping (`_method`, `_SessionToken`, …).
        let fields: ParseJSONObject
        /// The body's `_method`, upper case.
        let method: String?
        let caller: ParseCaller
        /// The session token the request presented (already shown to be valid when `caller` is a user).
        let token: SessionToken?
        let installationId: String?
    }

    /// Registers the routes through `routes` (the mount's group); keys in the headers are checked
    /// before the body is read (`ParseKeyMiddleware`), keys in the body by `call`.
    func register(on routes: HTTPRouteGroup) {
        let mount = mountPath
        let idempotency = ParseRequestIdempotency()
        let keyed = routes.group(ParseKeyMiddleware(.client, keys: keys, from: .headersOrBody))
        func route(
            _ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (Call) throws -> ParseAPI.Result
        ) {
            keyed.add(
                HTTPRoute(method, mount + path) { request in
                    let call = try self.call(request)
                    return ParseRoutes.respond(try handler(call), request)
                })
        }
        // Sign-up: the users route and the class route the SDKs use. A retried sign-up with the same
        // X-Parse-Request-Id gets the first answer; remembered in memory only, since the answer holds
        // a session token, which the database never stores in clear. There is no caller yet, so the
        // retry must send the same body (the credentials): knowing a request id alone replays nothing.
        for path in ["/users", "/classes/_User"] {
            // Find: the query string, or a POST body with `_method: GET` (the URL's parameters win).
            route(.get, path) { call in try self.findUsers(call, items: try ParseRoutes.queryItems(call.request)) }
            route(.post, path) { call in
                switch call.method {
                case nil, "POST"?:
                    return try idempotency.run(
                        requestId: call.request.headers["X-Parse-Request-Id"], scope: Self.signUpScope(call.request)
                    ) { try self.signUp(call) }
                case "GET"?:
                    let url = try ParseRoutes.queryItems(call.request)
                    let named = Set(url.map(\.name))
                    return try self.findUsers(
                        call, items: url + Self.queryItems(call.fields).filter { !named.contains($0.name) })
                default:
                    throw ParseError.invalidJSON("POST to \(path) needs no _method (sign-up) or _method GET (find).")
                }
            }
            route(.get, path + "/:objectId") { call in try self.getUser(call) }
            route(.put, path + "/:objectId") { call in try self.updateUser(call) }
            route(.delete, path + "/:objectId") { call in try self.deleteUser(call) }
            route(.post, path + "/:objectId") { call in
                switch call.method {
                case "GET"?: return try self.getUser(call)
                case "PUT"?: return try self.updateUser(call)
                case "DELETE"?: return try self.deleteUser(call)
                default: throw ParseError.invalidJSON("POST to a user needs _method GET, PUT or DELETE in the body.")
                }
            }
        }
        route(.get, "/users/me") { call in try self.me(call) }
        route(.post, "/users/me") { call in
            guard call.method == "GET" else { throw ParseError.invalidJSON("POST to users/me needs _method GET.") }
            return try self.me(call)
        }
        route(.get, "/login") { call in try self.logIn(call) }
        route(.post, "/login") { call in try self.logIn(call) }
        route(.post, "/logout") { call in
            if let token = call.token { try accounts.logOut(token) }
            return Self.emptyObject
        }
        route(.get, "/sessions/me") { call in try self.currentSession(call) }
        route(.post, "/sessions/me") { call in
            guard call.method == "GET" else { throw ParseError.invalidJSON("POST to sessions/me needs _method GET.") }
            return try self.currentSession(call)
        }
        route(.get, "/sessions") { call in
            guard try ParseRoutes.queryItems(call.request).isEmpty else {
                throw ParseError.invalidQuery("GET /sessions takes no parameters: it lists the caller's sessions.")
            }
            let userId: String?
            switch call.caller {
            case .master: userId = nil
            case .user(let id): userId = id
            case .anonymous: throw AccountError.sessionRequired("Session token required.")
            }
            let currentHash = call.token?.hash
            var json = ParseJSONWriter()
            json.beginObject()
            json.key("results")
            json.beginArray()
            for session in try accounts.sessionList(userId: userId) {
                Self.write(session, token: session.tokenHash == currentHash ? call.token : nil, to: &json)
            }
            json.endArray()
            json.endObject()
            return ParseAPI.Result(status: .ok, json: json.bytes)
        }
        route(.delete, "/sessions/:objectId") { call in
            let objectId = call.request.pathParameters["objectId"] ?? ""
            switch call.caller {
            case .master: try accounts.revokeSession(objectId: objectId, userId: nil)
            case .user(let id): try accounts.revokeSession(objectId: objectId, userId: id)
            case .anonymous: throw AccountError.sessionRequired("Session token required.")
            }
            return Self.emptyObject
        }
    }

    static let emptyObject = ParseAPI.Result(status: .ok, json: Array("{}".utf8))

    // MARK: Handlers

    private func signUp(_ call: Call) throws -> ParseAPI.Result {
        let appBody = try Self.appBody(call.fields)
        let created = try signUpAccount(call, appBody: appBody) {
            try accounts.signUp(
                username: try Self.string("username", call.fields), password: try Self.string("password", call.fields),
                email: try Self.string("email", call.fields), isMaster: call.caller == .master,
                installationId: call.installationId)
        }
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("objectId")
        json.string(created.user.objectId)
        json.key("createdAt")
        json.isoDate(milliseconds: ParseDate.milliseconds(created.user.createdAt))
        json.key("sessionToken")
        json.string(created.token.value)
        json.endObject()
        return ParseAPI.Result(
            status: .created, json: json.bytes, location: publicURL() + mountPath + "/users/" + created.user.objectId)
    }

    private func logIn(_ call: Call) throws -> ParseAPI.Result {
        // A JSON body (POST), else the query string (GET, and Parse Server lets it fill in for POST).
        var values: [String: String] = [:]
        for item in try ParseRoutes.queryItems(call.request) {
            guard ["username", "email", "password"].contains(item.name) else {
                throw ParseError.invalidQuery(
                    "Unknown login parameter \(item.name.prefix(40)); use username (or email) and password.")
            }
            values[item.name] = item.value
        }
        try Self.onlyFields(["username", "email", "password"], in: call.fields, className: "_User")
        for name in ["username", "email", "password"] {
            if let value = try Self.string(name, call.fields) { values[name] = value }
        }
        let result = try accounts.logIn(
            username: values["username"], email: values["email"], password: values["password"],
            address: call.request.remoteAddress, installationId: call.installationId)
        return ParseAPI.Result(status: .ok, json: try ownAccount(result.user.objectId, token: result.token))
    }

    private func findUsers(_ call: Call, items: [(name: String, value: String)]) throws -> ParseAPI.Result {
        try api.findUsers(
            items: try relatedUsers(items, caller: call.caller),
            access: ParseAccess(caller: call.caller, publicRead: publicRead))
    }

    /// What a sign-up's answer is remembered under besides its request id: the path and session
    /// header (`ParseRoutes.idempotencyScope`), the installation and the body's SHA-256, so only a
    /// retry carrying the same credentials gets the answer (and its session token) back.
    static func signUpScope(_ request: HTTPRequest) -> String {
        let body = (try? ParseRoutes.body(request)) ?? []
        let digest = SHA256BodyObserver.hex(SHA256.hash(data: body))
        return ParseRoutes.idempotencyScope(request) + "\n" + (request.headers["X-Parse-Installation-Id"] ?? "") + "\n"
            + digest
    }

    /// A body's members as query parameters: strings as they are, other values as JSON text.
    static func queryItems(_ fields: ParseJSONObject) -> [(name: String, value: String)] {
        fields.members.map { member in
            if case .string(let text) = member.value { return (member.key, text) }
            var writer = ParseJSONWriter()
            writer.value(member.value)
            return (member.key, String(decoding: writer.bytes, as: UTF8.self))
        }
    }

    private func me(_ call: Call) throws -> ParseAPI.Result {
        guard let token = call.token else { throw ParseError.invalidSessionToken() }
        return ParseAPI.Result(status: .ok, json: try ownAccount(try authenticator.userId(for: token), token: token))
    }

    private func currentSession(_ call: Call) throws -> ParseAPI.Result {
        guard let token = call.token else {
            throw ParseError(code: ParseError.Code.invalidSessionToken, message: "Session token required.")
        }
        guard let session = try accounts.session(token) else { throw ParseError.invalidSessionToken() }
        var json = ParseJSONWriter()
        Self.write(session, token: token, to: &json)
        return ParseAPI.Result(status: .ok, json: json.bytes)
    }

    /// Self or the master key: another user's account is not found (reads and deletes, as Parse
    /// Server answers for an object its ACL hides) or may not be modified (206, Parse's answer).
    private func authorize(_ call: Call, modifying: Bool) throws -> String {
        let objectId = call.request.pathParameters["objectId"] ?? ""
        switch call.caller {
        case .master: return objectId
        case .user(let id) where id == objectId: return objectId
        case .user:
            throw modifying ? AccountError.cannotModify(userId: String(objectId.prefix(32))) : AccountError.notFound
        case .anonymous: throw AccountError.sessionRequired("A session token is required to read or change a user.")
        }
    }

    private func getUser(_ call: Call) throws -> ParseAPI.Result {
        let objectId = try authorize(call, modifying: false)
        guard
            let json = try api.account(
                objectId, items: try ParseRoutes.queryItems(call.request), access: try access(call), checked: true)
        else { throw AccountError.notFound }
        return ParseAPI.Result(status: .ok, json: json)
    }

    private func updateUser(_ call: Call) throws -> ParseAPI.Result {
        let objectId = try authorize(call, modifying: true)
        let access = try self.access(call)
        try api.requireBuiltIn(.update, ParseClassSchema.user.className, access)
        let appChanges = try api.appFieldChanges(try Self.appBody(call.fields), of: .user, access: access)
        var changes = AccountService.Changes()
        changes.username = try Self.string("username", call.fields)
        changes.password = try Self.string("password", call.fields)
        switch call.fields["email"] {
        case nil: break
        case .null?: changes.email = .some(nil)
        case .string(let email)?: changes.email = .some(email)
        case .object(let operation)? where operation["__op"] == .string("Delete"): changes.email = .some(nil)
        case let other?: throw ParseError.incorrectType("email must be a string or null, not \(other.typeName).")
        }
        var updatedAt: Date?
        // A body that changes no app field still moves the account's updatedAt, as before.
        if changes.username != nil || changes.email != nil || changes.password != nil || appChanges?.isEmpty ?? true {
            updatedAt = try accounts.update(userId: objectId, changes, keepingSession: call.token).updatedAt
        }
        updatedAt = try api.applyAppFields(appChanges, .user, objectId: objectId) ?? updatedAt
        guard let updatedAt else { throw AccountError.notFound }
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("updatedAt")
        json.isoDate(milliseconds: ParseDate.milliseconds(updatedAt))
        json.endObject()
        return ParseAPI.Result(status: .ok, json: json.bytes)
    }

    private func deleteUser(_ call: Call) throws -> ParseAPI.Result {
        let objectId = try authorize(call, modifying: false)
        try accounts.deleteUser(objectId: objectId)
        return Self.emptyObject
    }

    // MARK: Requests and answers

    /// Reads the body (a JSON object or nothing), checks the keys (headers, or the body's when the
    /// headers have none) and decides the caller from the session token (209 for a bad one). Keys
    /// in the headers were checked before the body was read (`ParseKeyMiddleware.headersOrBody`).
    private func call(_ request: HTTPRequest) throws -> Call {
        let bytes = try ParseRoutes.body(request)
        var fields = ParseJSONObject()
        var bookkeeping: [String: String] = [:]
        if !bytes.isEmpty {
            let value: ParseJSONValue
            do {
                value = try ParseJSONParser.parse(bytes, maxDepth: maxJSONDepth + 3)
            } catch {
                try ParseRoutes.require(.client, request, keys)
                throw error
            }
            guard case .object(let object) = value else {
                try ParseRoutes.require(.client, request, keys)
                throw ParseError.invalidJSON("The body must be a JSON object.")
            }
            for member in object.members {
                if ParseMethodOverride.bookkeeping.contains(member.key) {
                    if case .string(let text) = member.value { bookkeeping[member.key] = text }
                } else {
                    fields.members.append(member)
                }
            }
        }
        let bodyKeys = KeyChecker.Keys(
            appID: bookkeeping["_ApplicationId"], restKey: bookkeeping["_JavaScriptKey"],
            masterKey: bookkeeping["_MasterKey"])
        let access = keys.access(request, bodyKeys: bodyKeys)
        guard access >= .client else { throw ParseUnauthorized() }
        let tokenText = request.headers["X-Parse-Session-Token"] ?? bookkeeping["_SessionToken"]
        let token = tokenText.map(SessionToken.init)
        let caller = try authenticator.caller(request, access: access, bodyToken: bookkeeping["_SessionToken"])
        // The master key with a session token still proves the token: a bad one is 209 either way.
        if caller == .master, let token { _ = try authenticator.userId(for: token) }
        return Call(
            request: request, fields: fields, method: bookkeeping["_method"]?.uppercased(), caller: caller,
            token: token,
            installationId: request.headers["X-Parse-Installation-Id"] ?? bookkeeping["_InstallationId"])
    }

    /// Refuses any body field but `allowed` (105), so a misspelt field is an error, never ignored.
    static func onlyFields(_ allowed: Set<String>, in fields: ParseJSONObject, className: String) throws {
        if let unknown = fields.keys.first(where: { !allowed.contains($0) }) {
            throw ParseError.invalidKeyName(
                "\(className) has no settable field \(unknown.prefix(40)); use \(allowed.sorted().joined(separator: ", "))."
            )
        }
    }

    /// A string field, nil when absent; any other type is 111.
    static func string(_ name: String, _ fields: ParseJSONObject) throws -> String? {
        switch fields[name] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw ParseError.incorrectType("\(name) must be a string, not \(other.typeName).")
        }
    }

    /// A session as Parse's `_Session`; the token only for the caller's own current session (the
    /// database keeps hashes, so no other token can be shown).
    static func write(_ session: AccountService.Session, token: SessionToken?, to json: inout ParseJSONWriter) {
        json.beginObject()
        json.key("objectId")
        json.string(session.objectId)
        if let token {
            json.key("sessionToken")
            json.string(token.value)
        }
        json.key("user")
        json.beginObject()
        json.key("__type")
        json.string("Pointer")
        json.key("className")
        json.string("_User")
        json.key("objectId")
        json.string(session.userId)
        json.endObject()
        json.key("createdWith")
        json.beginObject()
        json.key("action")
        json.string(session.createdWith)
        json.key("authProvider")
        json.string("password")
        json.endObject()
        json.key("restricted")
        json.bool(false)
        json.key("expiresAt")
        json.beginObject()
        json.key("__type")
        json.string("Date")
        json.key("iso")
        json.isoDate(milliseconds: ParseDate.milliseconds(session.expiresAt))
        json.endObject()
        if let installationId = session.installationId {
            json.key("installationId")
            json.string(installationId)
        }
        json.key("createdAt")
        json.isoDate(milliseconds: ParseDate.milliseconds(session.createdAt))
        json.key("updatedAt")
        json.isoDate(milliseconds: ParseDate.milliseconds(session.lastUsedAt))
        json.endObject()
    }
}
