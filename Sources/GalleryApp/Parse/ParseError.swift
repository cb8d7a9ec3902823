/// An error in the Parse REST API's shape: a numeric Parse code and a message, written to the
/// client as `{"code":N,"error":"…"}`. Codes follow Parse Server (`Parse.Error` in the JS SDK).
public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The Parse error code (see `ParseError.Code`).
    public let code: Int
    /// A message for the client: says what was wrong, never echoes large input.
    public let message: String

    /// An error with the given Parse code and message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// Parse's numeric error codes used by galleryd.
    public enum Code {
        /// Something went wrong on the server (maps to HTTP 500).
        public static let internalServerError = 1
        /// The object does not exist (maps to HTTP 404).
        public static let objectNotFound = 101
        /// A query parameter, field, operator or value is invalid.
        public static let invalidQuery = 102
        /// A field name is unknown or may not be set.
        public static let invalidKeyName = 105
        /// A malformed pointer, or a pointer to the wrong class.
        public static let invalidPointer = 106
        /// Badly formed JSON (syntax, encoding, nesting), or a malformed `$text`.
        public static let invalidJSON = 107
        /// A value has the wrong type for its field.
        public static let incorrectType = 111
        /// The operation is not allowed.
        public static let operationForbidden = 119
        /// The class name is not one this server has (also used for unknown routes under the mount).
        public static let invalidClassName = 103
        /// An object or request body is too large.
        public static let objectTooLarge = 116
        /// A file name is invalid.
        public static let invalidFileName = 122
        /// An email address is not in a valid format.
        public static let invalidEmailAddress = 125
        /// The operation took too long (a cancelled statement).
        public static let timeout = 124
        /// An upload is over the size limit.
        public static let fileTooLarge = 129
        /// The ACL is malformed (Parse's INVALID_ACL).
        public static let invalidACL = 123
        /// An upload could not be stored (not a JPEG, corrupt, over the pixel limit).
        public static let fileSaveError = 130
        /// A unique value already exists.
        public static let duplicateValue = 137
        /// A server-side script failed.
        public static let scriptFailed = 141
        /// A value has the right type but fails validation (e.g. an empty gallery name).
        public static let validationError = 142
        /// Too many requests of a kind (login attempts): HTTP 429 with `Retry-After`.
        public static let requestLimitExceeded = 155
        /// Sign-up or login without a username.
        public static let usernameMissing = 200
        /// Sign-up or login without a password.
        public static let passwordMissing = 201
        /// The username is taken.
        public static let usernameTaken = 202
        /// The email address is taken.
        public static let emailTaken = 203
        /// The request needs a session and has none (or may not act on another user).
        public static let sessionMissing = 206
        /// The session token is unknown, revoked or expired.
        public static let invalidSessionToken = 209
        /// A Pointer or Relation field declared without `targetClass` (Parse's 135).
        public static let missingTargetClass = 135
        /// A field that no schema may add or delete (the default fields; Parse's 136).
        public static let changedImmutableField = 136
        /// A schema change that contradicts the stored schema: a field that exists with another
        /// type, a missing field deleted, a class with objects dropped (Parse Server's 255).
        public static let schemaConflict = 255
    }

    /// 102: the query is invalid.
    public static func invalidQuery(_ message: String) -> ParseError {
        ParseError(code: Code.invalidQuery, message: message)
    }
    /// 101: the object was not found.
    public static func objectNotFound(_ message: String = "Object not found.") -> ParseError {
        ParseError(code: Code.objectNotFound, message: message)
    }
    /// 105: an unknown or forbidden field name.
    public static func invalidKeyName(_ message: String) -> ParseError {
        ParseError(code: Code.invalidKeyName, message: message)
    }
    /// 106: a malformed pointer.
    public static func invalidPointer(_ message: String) -> ParseError {
        ParseError(code: Code.invalidPointer, message: message)
    }
    /// 107: badly formed JSON.
    public static func invalidJSON(_ message: String) -> ParseError {
        ParseError(code: Code.invalidJSON, message: message)
    }
    /// 111: a value of the wrong type.
    public static func incorrectType(_ message: String) -> ParseError {
        ParseError(code: Code.incorrectType, message: message)
    }
    /// 119: the operation is forbidden.
    public static func operationForbidden(_ message: String) -> ParseError {
        ParseError(code: Code.operationForbidden, message: message)
    }
    /// 119 for a write without a session (Parse Server's words for a class that requires
    /// authentication).
    public static func authenticationRequired() -> ParseError {
        ParseError(code: Code.operationForbidden, message: "Permission denied, user needs to be authenticated.")
    }
    /// 123: a malformed ACL.
    public static func invalidACL(_ message: String) -> ParseError {
        ParseError(code: Code.invalidACL, message: message)
    }
    /// 137: a duplicate value.
    public static func duplicateValue(_ message: String) -> ParseError {
        ParseError(code: Code.duplicateValue, message: message)
    }
    /// 142: a value failed validation.
    public static func validationError(_ message: String) -> ParseError {
        ParseError(code: Code.validationError, message: message)
    }
    /// 209: the session token is unknown, revoked or expired (Parse Server's message).
    public static func invalidSessionToken() -> ParseError {
        ParseError(code: Code.invalidSessionToken, message: "Invalid session token")
    }
    /// 1: an internal error; the message should stay generic.
    public static func internalServerError(_ message: String = "Internal server error.") -> ParseError {
        ParseError(code: Code.internalServerError, message: message)
    }

    /// The HTTP status code for this error: 101 → 404, 1 → 500, every other code → 400.
    public var httpStatusCode: Int {
        switch code {
        case Code.objectNotFound: return 404
        case Code.internalServerError: return 500
        case Code.requestLimitExceeded: return 429
        default: return 400
        }
    }

    /// The response body `{"code":N,"error":"…"}` as UTF-8 JSON bytes.
    public var jsonBody: [UInt8] {
        var writer = ParseJSONWriter(capacity: message.utf8.count + 32)
        writer.beginObject()
        writer.key("code")
        writer.int(Int64(code))
        writer.key("error")
        writer.string(message)
        writer.endObject()
        return writer.bytes
    }

    /// `code: message`, for logs.
    public var description: String { "ParseError \(code): \(message)" }
}
