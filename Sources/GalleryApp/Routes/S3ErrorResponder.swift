import BlobStore
import Foundation
import HTTPServer
import Logging

/// Renders errors under the bucket path as S3 does: an XML `<Error>` document with a `Code`,
/// so S3 clients report them properly.
struct S3ErrorResponder: HTTPErrorResponder {
    /// The bucket name, echoed in error documents.
    let bucket: String
    /// Where refused keys are logged (at notice: bad input, not a server fault).
    let logger: Logger

    func response(for error: Error, request: HTTPRequest) -> HTTPResponse {
        switch error {
        case BlobStoreError.invalidKey(_, let reason):
            logger.notice("invalid key", metadata: ["requestId": "\(request.requestID)", "reason": "\(reason)"])
            return document(.badRequest, code: "InvalidArgument", message: "Invalid key: \(reason).", request: request)
        case let refused as AssetURLError:
            // Logged with the reason; the client learns only that access is denied (or expired, as S3 says).
            logger.notice(
                "asset URL refused",
                metadata: [
                    "requestId": "\(request.requestID)", "path": "\(request.path)", "reason": "\(refused)",
                ])
            let message = if case .expired = refused { "Request has expired" } else { "Access Denied" }
            return document(.forbidden, code: "AccessDenied", message: message, request: request)
        case BlobStoreError.notFound:
            return document(
                .notFound, code: "NoSuchKey", message: "The specified key does not exist.", request: request)
        case BlobStoreError.unavailable, BlobStoreError.remote:
            // The object store behind the bucket failed after its retries: a fault of the surroundings.
            logger.error("object store failed", metadata: ["requestId": "\(request.requestID)", "error": "\(error)"])
            var answer = document(
                .serviceUnavailable, code: "ServiceUnavailable",
                message: "The object store is unavailable. Please try again.", request: request)
            answer.headers["Retry-After"] = "5"
            return answer
        case let error as HTTPError:
            // With its headers (Retry-After of a 503 SlowDown, Allow, Content-Range).
            var answer = response(status: error.status, message: error.message, request: request)
            for field in error.headers { answer.headers[field.name] = field.value }
            return answer
        default:
            return document(
                .internalServerError, code: "InternalError",
                message: "We encountered an internal error. Please try again.", request: request)
        }
    }

    func response(status: HTTPStatus, message: String, request: HTTPRequest) -> HTTPResponse {
        let code: String
        switch status.code {
        case 404: code = "NoSuchKey"
        case 405: code = "MethodNotAllowed"
        case 411: code = "MissingContentLength"
        case 412: code = "PreconditionFailed"
        case 413: code = "EntityTooLarge"
        case 416: code = "InvalidRange"
        case 503: code = "SlowDown"
        case 500...: code = "InternalError"
        default: code = "InvalidRequest"
        }
        return document(status, code: code, message: message, request: request)
    }

    private func document(_ status: HTTPStatus, code: String, message: String, request: HTTPRequest) -> HTTPResponse {
        let key = request.pathParameters["key"] ?? ""
        let xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code>"
            + "<Message>\(XMLText.escaped(message))</Message>"
            + (key.isEmpty ? "" : "<Key>\(XMLText.escaped(key))</Key>")
            + "<BucketName>\(XMLText.escaped(bucket))</BucketName>"
            + "<RequestId>\(XMLText.escaped(request.requestID))</RequestId></Error>\n"
        return HTTPResponse(status: status, contentType: "application/xml", bytes: Array(xml.utf8)).notStored()
    }
}
