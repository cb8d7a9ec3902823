/// `_User` among the built-in classes: the class routes do not serve it (`UserRoutes` does), but
/// `/parse/schemas/_User` changes its class-level permissions and fields of an app's own as it
/// does Photo's (docs/decisions/045).
extension ParseClassSchema {
    /// The built-in class called `className`, `_User` included; nil for any other name.
    static func builtIn(named className: String) -> ParseClassSchema? {
        named(className) ?? (className == user.className ? user : nil)
    }

    /// The `_User` members the account routes set themselves (sign-up, `PUT /users/<id>`).
    static let accountFields: Set<String> = ["username", "password", "email"]

    /// Names no app field of `_User` may take: Parse Server's own `_User` columns (`password`,
    /// `emailVerified`, `authData`), the `sessionToken` a login answers with, and galleryd's
    /// administrator flag. A body naming one is 105, as before app fields existed.
    static let reservedUserFields: Set<String> = ["password", "emailVerified", "authData", "sessionToken", "isAdmin"]
}
