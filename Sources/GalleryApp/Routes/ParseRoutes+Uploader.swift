import HTTPServer

/// Who may upload a file: a user (with a session) or the master key, never the app's keys alone
/// (Parse Server's default, `fileUpload.enableForPublic: false`), whether or not accounts exist.
extension ParseRoutes {
    /// Checks the caller of an upload on its head, on the event loop (without blocking): no session
    /// and no master key, or a token that cannot be one, is refused at once, before a byte of the
    /// body is stored or spool reserved. A plausible token not remembered yet passes here; the
    /// handler checks it against the database (`requireUploader`) before storing anything.
    static func requireUploaderOnHead(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) throws {
        switch context.sessions.rememberedCaller(request, access: keys.access(request)) {
        case .anonymous?:
            throw publicUploadRefused()
        case .master?, .user?:
            return
        case nil:
            guard SessionToken(request.headers["X-Parse-Session-Token"] ?? "").isPlausible else {
                throw ParseError.invalidSessionToken()
            }
        }
    }

    /// The handler's check of the uploader, who is returned: 209 for a session token that logs no
    /// one in, 130 without one.
    static func requireUploader(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) throws -> ParseCaller {
        let caller = try access(request, keys, context).caller
        guard caller != .anonymous else { throw publicUploadRefused() }
        return caller
    }

    /// Parse Server's answer to an upload by the public: 130.
    static func publicUploadRefused() -> ParseError {
        ParseError(code: ParseError.Code.fileSaveError, message: "File upload by public is disabled.")
    }
}
