/// What went wrong with an account or session operation, in the domain's words. The routes turn
/// these into Parse's codes (`ParseErrorResponder.parseError(for:)`); the `users` command prints them.
public enum AccountError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No username given (sign-up, login).
    case usernameMissing
    /// No password given (sign-up, login).
    case passwordMissing
    /// A username that is too long or holds control characters.
    case invalidUsername(String)
    /// A password over the length limit.
    case invalidPassword(String)
    /// An email address that is not `something@something`.
    case invalidEmail
    /// Another account has the username.
    case usernameTaken
    /// Another account has the email address (compared case-insensitively).
    case emailTaken
    /// Unknown username or wrong password: deliberately the same answer.
    case invalidCredentials
    /// Too many failed logins for the username or the client address; retry after that many seconds.
    case throttled(retryAfterSeconds: Int)
    /// Every login slot is taken (logins, sign-ups and password changes hashing or waiting for
    /// the hash pool): answered 503 with `Retry-After` at once, never queued on a handler thread.
    case busy(retryAfterSeconds: Int)
    /// Sign-up is closed (`signup_open = false`) and the request has no master key.
    case signupClosed
    /// The operation needs a session and the request has none.
    case sessionRequired(String)
    /// The caller may not change this user (another user's account).
    case cannotModify(userId: String)
    /// No such user or session, or one the caller may not see.
    case notFound
    /// A field the account does not have, or may not be set this way.
    case invalidField(String)
    /// The user still owns photos, galleries or gallery items (deleted through the trash first).
    case ownsContent(userId: String)

    public var description: String {
        switch self {
        case .usernameMissing: return "bad or missing username"
        case .passwordMissing: return "password is required"
        case .invalidUsername(let reason): return "invalid username: \(reason)"
        case .invalidPassword(let reason): return "invalid password: \(reason)"
        case .invalidEmail: return "Email address format is invalid."
        case .usernameTaken: return "Account already exists for this username."
        case .emailTaken: return "Account already exists for this email address."
        case .invalidCredentials: return "Invalid username/password."
        case .throttled(let seconds): return "Too many failed login attempts; try again in \(seconds) s."
        case .busy(let seconds): return "Too many logins in progress; try again in \(seconds) s."
        case .signupClosed: return "Permission denied for action create on class _User."
        case .sessionRequired(let message): return message
        case .cannotModify(let userId): return "Cannot modify user \(userId)."
        case .notFound: return "Object not found."
        case .invalidField(let message): return message
        case .ownsContent(let userId):
            return
                "User \(userId) still owns photos, galleries or gallery items: move them to the trash and purge them first."
        }
    }
}
