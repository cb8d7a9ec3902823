import BlobStore
import Foundation
import HTTPServer
import Logging
import Postgres

/// Renders errors under the Parse mount as Parse Server does: `{"code":N,"error":"…"}` with
/// 101 → 404, 1 → 500 and every other code → 400; a busy, unavailable or lost database is a
/// 503 with code 1 and `Retry-After`.
/// Unknown errors are a generic 500 quoting the request id; the HTTP layer logs their details under it.
/// Every error answer carries `Cache-Control: no-store`, so no client cache keeps it.
///
/// The one place where the services' domain errors (`GalleryError`) become Parse codes and HTTP
/// statuses (`parseError(for:)`, used by `POST /batch` too).
struct ParseErrorResponder: HTTPErrorResponder {
    let logger: Logger

    /// The Parse error for a `ParseError` or a domain error; nil for anything else (a 500, a 503…).
    static func parseError(for error: Error) -> ParseError? {
        switch error {
        case let error as ParseError: return error
        case let error as GalleryError:
            switch error {
            case .notFound(let message): return .objectNotFound(message)
            case .alreadyInGallery(let message): return .duplicateValue(message)
            case .galleryTrashed(let message): return .operationForbidden(message)
            case .unstorableImage(let message): return ParseError(code: ParseError.Code.fileSaveError, message: message)
            case .unknownFile(let message): return .incorrectType(message)
            case .conflict(let message): return .internalServerError(message)
            }
        case let error as AccountError:
            let message = error.description
            switch error {
            case .usernameMissing, .invalidUsername:
                return ParseError(code: ParseError.Code.usernameMissing, message: message)
            case .passwordMissing: return ParseError(code: ParseError.Code.passwordMissing, message: message)
            case .invalidPassword: return .validationError(message)
            case .invalidEmail: return ParseError(code: ParseError.Code.invalidEmailAddress, message: message)
            case .usernameTaken: return ParseError(code: ParseError.Code.usernameTaken, message: message)
            case .emailTaken: return ParseError(code: ParseError.Code.emailTaken, message: message)
            case .invalidCredentials, .notFound: return .objectNotFound(message)
            case .throttled: return ParseError(code: ParseError.Code.requestLimitExceeded, message: message)
            case .busy: return .internalServerError(message)
            case .signupClosed: return .operationForbidden(message)
            case .sessionRequired, .cannotModify:
                return ParseError(code: ParseError.Code.sessionMissing, message: message)
            case .invalidField: return .invalidKeyName(message)
            case .ownsContent: return .operationForbidden(message)
            }
        default: return nil
        }
    }

    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        errorResponse(for: error, request: request).notStored()
    }

    private func errorResponse(for error: Error, request: HTTPRequest) -> HTTPResponse {
        if case AccountError.busy(let seconds) = error {
            logger.warning("login refused: every login slot is taken", metadata: ["requestId": "\(request.requestID)"])
            return document(
                .serviceUnavailable, code: 1, message: "\(error)", headers: ["Retry-After": String(seconds)])
        }
        if let error = error as? JSONUploadsBusy {
            logger.warning("JSON upload refused: every slot is taken", metadata: ["requestId": "\(request.requestID)"])
            return document(
                .serviceUnavailable, code: 1, message: error.description,
                headers: ["Retry-After": String(JSONUploadsBusy.retryAfterSeconds)])
        }
        if let parseError = Self.parseError(for: error) {
            // 5xx are logged by the HTTP layer with the request id; client mistakes at notice here.
            if parseError.code != ParseError.Code.internalServerError {
                logger.notice(
                    "bad request",
                    metadata: [
                        "requestId": "\(request.requestID)", "code": "\(parseError.code)",
                        "error": "\(parseError.message)",
                    ])
            }
            var response = HTTPResponse.json(parseError.jsonBody, status: parseError.httpStatus)
            // 429: when to try again (RFC 6585 §4), as the login back-off decided.
            if case AccountError.throttled(let seconds) = error { response.headers["Retry-After"] = String(seconds) }
            return response
        }
        switch error {
        case let error as ParseUnauthorized:
            var metadata: Logger.Metadata = ["requestId": "\(request.requestID)", "path": "\(request.path)"]
            if let reason = error.reason { metadata["reason"] = "\(reason)" }
            logger.notice("unauthorized", metadata: metadata)
            return .json(Array("{\"error\":\"unauthorized\"}".utf8), status: .forbidden)
        case let error as TooManyUploads:
            logger.notice("upload refused: \(error.message)", metadata: ["requestId": "\(request.requestID)"])
            return document(
                .tooManyRequests, code: ParseError.Code.requestLimitExceeded, message: error.message,
                headers: ["Retry-After": String(TooManyUploads.retryAfterSeconds)])
        case let error as InsufficientStorage:
            logger.warning("upload refused: \(error.message)", metadata: ["requestId": "\(request.requestID)"])
            return insufficientStorage(error.message)
        case BlobStoreError.insufficientStorage:
            logger.error("store full: \(error)", metadata: ["requestId": "\(request.requestID)"])
            return insufficientStorage(Self.diskFull)
        case let error as HTTPError where error.status == .insufficientStorage:
            // The disk filled while the body was being spooled (ENOSPC in the HTTP layer): the same
            // answer as any other full disk, Retry-After included.
            logger.error("store full while spooling: \(error.message)", metadata: ["requestId": "\(request.requestID)"])
            return insufficientStorage(Self.diskFull)
        case let error as HTTPError:
            var response = self.response(status: error.status, message: error.message, request: request)
            for field in error.headers { response.headers.add(field.name, field.value) }
            return response
        case let error as PostgresError:
            if case .poolTimeout = error {
                logger.warning("database busy", metadata: ["requestId": "\(request.requestID)"])
                return document(
                    .serviceUnavailable, code: 1, message: "Database busy, try again.", headers: ["Retry-After": "1"])
            }
            if case .server(let state, _, _, _) = error {
                if state == .queryCanceled {
                    logger.notice("query timed out", metadata: ["requestId": "\(request.requestID)"])
                    return document(.badRequest, code: 124, message: "The query took too long and was cancelled.")
                }
                if state == .uniqueViolation {
                    return document(
                        .badRequest, code: ParseError.Code.duplicateValue,
                        message: "A duplicate value for a unique field.")
                }
            }
            if case .connectFailed = error {
                return document(
                    .serviceUnavailable, code: 1, message: "Database unavailable.", headers: ["Retry-After": "2"])
            }
            if case .connectionClosed = error {
                // The database connection dropped mid-request (a restart): a write may or may not have
                // been applied, and the Postgres layer never re-runs it blindly. The client retries:
                // DELETE only trashes, PUT sets values, and a create of the same bytes finds the photo.
                logger.warning(
                    "database connection lost", metadata: ["requestId": "\(request.requestID)", "error": "\(error)"])
                return document(
                    .serviceUnavailable, code: 1,
                    message: "Database connection lost; the request may not have completed, try again.",
                    headers: ["Retry-After": "1"])
            }
            return internalError(request)
        default:
            return internalError(request)
        }
    }

    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        let code: Int
        switch status.code {
        case 404: code = ParseError.Code.invalidClassName
        case 405: code = ParseError.Code.operationForbidden
        case 408: code = ParseError.Code.timeout
        case 413:
            code = request.path.contains("/files/") ? ParseError.Code.fileTooLarge : ParseError.Code.objectTooLarge
        case 503, 507: code = ParseError.Code.internalServerError
        case 500...: code = ParseError.Code.internalServerError
        default: code = ParseError.Code.invalidJSON
        }
        return document(status, code: code, message: message)
    }

    /// What a full disk tells the client.
    static let diskFull = "Insufficient storage: the server's disk is full. Try again later."

    /// 507 with Parse code 1 and `Retry-After`: freeing space cures it, so the client retries.
    private func insufficientStorage(_ message: String) -> HTTPResponse {
        document(.insufficientStorage, code: 1, message: message, headers: ["Retry-After": "60"])
    }

    private func internalError(_ request: HTTPRequest) -> HTTPResponse {
        document(.internalServerError, code: 1, message: "Internal server error (request \(request.requestID)).")
    }

    private func document(_ status: HTTPStatus, code: Int, message: String, headers: HTTPHeaders = HTTPHeaders())
        -> HTTPResponse
    {
        var json = ParseJSONWriter()
        json.beginObject()
        json.key("code")
        json.int(Int64(code))
        json.key("error")
        json.string(message)
        json.endObject()
        var response = HTTPResponse.json(json.bytes, status: status)
        for field in headers { response.headers.add(field.name, field.value) }
        return response.notStored()
    }
}
