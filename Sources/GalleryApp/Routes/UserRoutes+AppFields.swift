/// The fields an app added to `_User` (docs/decisions/045), on the account routes: a sign-up or
/// `PUT /users/<id>` may set them besides `username`, `password` and `email`, as Parse Swift's
/// custom `ParseUser` properties are sent, under `_User`'s class-level permissions (`create`,
/// `update`, and `addField` for a field it lacks) and their types (111), as on the other
/// classes; login, `me` and `GET /users/<id>` answer with them.
extension UserRoutes {
    /// The members of a sign-up's or update's body that are no account field: the app's fields,
    /// as the JSON body `ParseAPI.appFieldChanges` parses; nil when there are none. 105 for one
    /// of `_User`'s reserved names (`ParseClassSchema.reservedUserFields`) or a field every
    /// class has (`objectId`, `ACL`…), which no body sets here.
    static func appBody(_ fields: ParseJSONObject) throws -> [UInt8]? {
        let app = fields.members.filter { !ParseClassSchema.accountFields.contains($0.key) }
        if let reserved = app.first(where: {
            ParseClassSchema.reservedUserFields.contains($0.key) || ParseClassName.defaultFields.contains($0.key)
        }) {
            throw ParseError.invalidKeyName(
                "_User has no settable field \(reserved.key.prefix(40)); use email, password, username or a field of the app's own."
            )
        }
        guard !app.isEmpty else { return nil }
        var writer = ParseJSONWriter()
        writer.value(.object(ParseJSONObject(app)))
        return writer.bytes
    }

    /// A sign-up whose account `create` makes, once sign-up is open to the caller, `_User`'s
    /// `create` permission allows it, and the app's fields of `appBody` are checked (a field the
    /// class lacks is added when `addField` allows, 119 otherwise; 111 for a wrong type). Their
    /// values are written after; an account whose values cannot be written is taken back, so a
    /// refused sign-up leaves none.
    func signUpAccount(
        _ call: Call, appBody: [UInt8]?, create: () throws -> (user: AccountService.User, token: SessionToken)
    ) throws -> (user: AccountService.User, token: SessionToken) {
        // A closed sign-up answers so before any field is added to `_User`.
        guard call.caller == .master || accounts.signupOpen else { throw AccountError.signupClosed }
        let access = ParseAccess(caller: call.caller, publicRead: publicRead)
        try api.requireBuiltIn(.create, ParseClassSchema.user.className, access)
        let appChanges = try api.appFieldChanges(appBody, of: .user, access: access)
        let created = try create()
        do {
            _ = try api.applyAppFields(appChanges, .user, objectId: created.user.objectId)
        } catch {
            try? accounts.deleteUser(objectId: created.user.objectId)
            throw error
        }
        return created
    }

    /// The caller's own account with its session token, as a login and `me` answer it: every
    /// field, the app's included (Parse Server shows a user their own row whole); 209 when the
    /// account is gone.
    func ownAccount(_ userId: String, token: SessionToken) throws -> [UInt8] {
        guard let object = try api.account(userId, access: ParseAccess(caller: .user(objectId: userId)), checked: false)
        else { throw ParseError.invalidSessionToken() }
        var value = ParseJSONWriter()
        value.value(.string(token.value))
        // The object's closing brace becomes `,"sessionToken":"…"}`.
        return Array(object.dropLast()) + Array(#","sessionToken":"#.utf8) + value.bytes + Array("}".utf8)
    }

    /// The caller of `call` with their roles, as `_User`'s class-level permissions read it.
    func access(_ call: Call) throws -> ParseAccess {
        try authenticator.roles.access(for: call.caller, publicRead: publicRead)
    }
}
