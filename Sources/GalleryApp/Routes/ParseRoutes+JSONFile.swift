import BlobStore
import Crypto
import Foundation
import HTTPServer

/// The JavaScript SDK's upload (`ParseFile.save` → `saveFile` → `saveBase64`, every release since
/// 3.x): `POST <mount>/files/<name>` without `X-Parse-*` headers, `Content-Type: text/plain`, and
/// a JSON body `{"base64", "fileData", "_ContentType", "_ApplicationId", "_JavaScriptKey",
/// "_ClientVersion", "_InstallationId", "_SessionToken" | "_MasterKey"}`. Parse Server takes it in
/// `handleParseHeaders` (`fileViaJSON`): with no application id in the headers it parses the body
/// (not JSON: 403), reads the keys from it and replaces the body by the base64's bytes. Here the
/// keys cannot be checked on the head, so the body is read (bounded by the upload limit's base64
/// length and a little JSON) and checked by the handler; the decoded file then takes the raw
/// upload's way (`storeUpload`). Requests with an application id header never come here.
extension ParseRoutes {
    /// JSON uploads read, parsed and decoded at once (never more than half the handler threads): each
    /// holds its body and the base64 text parsed from it, about 2 × 4/3 of its file (up to ~270 MB at
    /// the default `max_upload_bytes`), before its keys can be checked, so a flood of keyless bodies
    /// must not hold that on every handler thread. Past it: 503 with `Retry-After` (`JSONUploadsBusy`),
    /// which the SDK retries.
    static let jsonUploadsAtOnce = 2

    /// Room for the JSON around the base64 text: the SDK's members, `fileData`'s metadata and tags.
    static let jsonUploadOverheadBytes = 16 * 1024

    /// The largest JSON upload body: the upload limit's base64 length and the JSON around it.
    static func maxJSONUploadBytes(_ configuration: GalleryConfiguration) -> Int {
        (configuration.maxUploadBytes + 2) / 3 * 4 + jsonUploadOverheadBytes
    }

    /// Whether a request without keys in its headers may be a JSON upload: its `Content-Type` is
    /// absent, `text/plain` (the SDK's, to which browsers add a charset) or `application/json`.
    static func mayBeJSONUpload(_ request: HTTPRequest) -> Bool {
        guard let type = request.headers["Content-Type"] else { return true }
        let media = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let name = media.trimmingCharacters(in: .whitespaces).lowercased()
        return name == "text/plain" || name == "application/json"
    }

    /// The head's admission of a request without an application id header: 403 at once unless it
    /// may be a JSON upload; else a reservation for its sender's address (the caller is not known
    /// until the body is read) and the body limit of a JSON upload.
    static func admitJSONUpload(_ request: HTTPRequest, _ context: Context) throws -> HTTPBodyObserver {
        guard mayBeJSONUpload(request) else { throw ParseUnauthorized() }
        let length = request.headers["Content-Length"].flatMap { Int($0) }
        let limit = maxJSONUploadBytes(context.configuration)
        // Over the bound: 413 by the server, as for a raw upload over the limit, before any reservation.
        guard length.map({ $0 <= limit }) ?? true else { return JSONUploadBodyObserver(reservation: nil, limit: limit) }
        let sender = UploadAdmission.Sender(user: nil, address: LoginThrottle.host(request.remoteAddress))
        return JSONUploadBodyObserver(
            reservation: try context.uploadAdmission.admit(contentLength: length, from: sender), limit: limit)
    }

    /// `POST /files/<name>` with the JavaScript SDK's JSON body: the body's keys and caller checked
    /// as Parse Server does (403 without a valid application id, 130 for the public, 209 for a bad
    /// session), the base64 decoded to a spool file while it is hashed, then stored as a raw upload.
    static func uploadJSONFile(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) throws -> HTTPResponse {
        try context.jsonUploadSlots.run(refusing: JSONUploadsBusy()) { try decodeJSONFile(request, keys, context) }
    }

    /// `uploadJSONFile` in its slot.
    private static func decodeJSONFile(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) throws
        -> HTTPResponse
    {
        let object = try jsonUploadObject(request, maxDepth: context.configuration.maxJSONDepth)
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            // Parse Server: a key member that is not a string is an invalid request (403).
            guard case .string(let text) = value else { throw ParseUnauthorized() }
            return text
        }
        let bodyKeys = KeyChecker.Keys(
            appID: try string("_ApplicationId"), restKey: try string("_JavaScriptKey"),
            masterKey: try string("_MasterKey"))
        guard bodyKeys.appID != nil else { throw ParseUnauthorized() }
        try require(.client, request, keys, bodyKeys: bodyKeys)
        let caller = try context.sessions.caller(
            request, access: keys.access(request, bodyKeys: bodyKeys), bodyToken: try string("_SessionToken"))
        guard caller != .anonymous else { throw publicUploadRefused() }
        let name = try validUploadName(request)
        guard let value = object["base64"], case .string(let base64) = value else {
            throw ParseError(
                code: ParseError.Code.fileSaveError, message: "The JSON upload has no base64 string with the file.")
        }
        let reservation = (request.bodyObserver as? JSONUploadBodyObserver)?.reservation
        let decoded = try decodeToSpool(
            base64, context: context, reservation: reservation, jsonBytes: request.body.count)
        defer { unlink(decoded.path) }
        return try storeUpload(
            at: decoded.path, sha256: decoded.sha256, byteSize: decoded.byteSize, name: name, uploader: caller.userId,
            context: context)
    }

    /// The body as a JSON object; 403 `unauthorized` when it is not one (Parse Server's answer
    /// when its `JSON.parse` fails). The body's bytes are let go when this returns.
    private static func jsonUploadObject(_ request: HTTPRequest, maxDepth: Int) throws -> ParseJSONObject {
        let body = try Self.body(request)
        guard let parsed = try? ParseJSONParser.parse(body, maxDepth: maxDepth + 3), case .object(let object) = parsed
        else { throw ParseUnauthorized() }
        return object
    }

    /// Decodes `base64` to a new file in the spool directory, hashing the decoded bytes as they are
    /// written (no copy of the file in memory); the upload's reservation grows to cover it. The
    /// file is removed on any error; the caller removes it once stored.
    private static func decodeToSpool(
        _ base64: String, context: Context, reservation: UploadAdmission.Reservation?, jsonBytes: Int
    ) throws -> (path: String, sha256: String, byteSize: Int) {
        let path = context.store.spoolDirectory + "/" + UUID().uuidString
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw ParseError.internalServerError("cannot create an upload spool file") }
        var hasher = SHA256()
        var written = 0
        do {
            defer { close(fd) }
            var text = base64
            try text.withUTF8 { utf8 in
                var decoder = Base64StreamDecoder()
                try decoder.decode(utf8) { chunk in
                    try reservation?.cover(jsonBytes + written + chunk.count)
                    try LocalBlobStore.writeAll(fd, chunk, path: path)
                    chunk.withUnsafeBytes { hasher.update(bufferPointer: $0) }
                    written += chunk.count
                }
            }
        } catch {
            unlink(path)
            if let error = error as? Base64StreamDecoder.Invalid {
                throw ParseError(code: ParseError.Code.fileSaveError, message: error.description)
            }
            throw error
        }
        guard written > 0 else {
            unlink(path)
            throw ParseError(code: ParseError.Code.fileSaveError, message: "The file is empty.")
        }
        return (path, SHA256BodyObserver.hex(hasher.finalize()), written)
    }
}

/// A JSON upload's body observer: holds the upload's reservation for the request's life, sets the
/// body limit of a JSON upload, and refuses (403) a body that does not start as a JSON object, so a
/// raw file sent without keys is not read through.
// @unchecked: fed on the connection's loop thread, one chunk at a time.
final class JSONUploadBodyObserver: HTTPBodyObserver, @unchecked Sendable {
    let reservation: UploadAdmission.Reservation?
    let maxBodyBytes: Int?
    private var received = 0
    private var sawStart = false

    init(reservation: UploadAdmission.Reservation?, limit: Int) {
        self.reservation = reservation
        self.maxBodyBytes = limit
    }

    func consume(_ chunk: UnsafeRawBufferPointer) throws {
        received += chunk.count
        try reservation?.cover(received)
        guard !sawStart else { return }
        for byte in chunk {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "{"): sawStart = true
            default: throw ParseUnauthorized()
            }
            return
        }
    }
}

/// Every JSON upload slot is taken (`ParseRoutes.jsonUploadsAtOnce`): 503 with `Retry-After`.
struct JSONUploadsBusy: Error, CustomStringConvertible {
    static let retryAfterSeconds = 1
    var description: String { "Too many JSON file uploads in progress; try again in \(Self.retryAfterSeconds) s." }
}
