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
/// length and a little JSON) in one pass (`JSONUploadScanner`: the keys kept, the base64 decoded to
/// a spool file as it is read) and the keys checked after it; the decoded file then takes the raw
/// upload's way (`storeUpload`). Requests with an application id header never come here.
extension ParseRoutes {
    /// JSON uploads read and decoded at once: 0, half the handler threads (`HandlerSlots`). A JSON
    /// upload holds no more than a read piece, the decoder's chunk and its capped key members in memory
    /// (`JSONUploadScanner`), whatever its size, and its spool is charged to its sender's address; but
    /// its keys are known only once the whole body has been read and decoded (the SDK puts them after
    /// the base64), so a keyless sender still costs a handler thread a pass over up to
    /// `maxJSONUploadBytes`. Past the slots: 503 with `Retry-After` (`JSONUploadsBusy`), which the SDK
    /// retries, and the other half of the threads is left to everything else, as for logins.
    static let jsonUploadsAtOnce = 0

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
        guard mayBeJSONUpload(request) else {
            throw ParseUnauthorized(reason: "no X-Parse-Application-Id header, and not a JSON upload's Content-Type")
        }
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

    /// `uploadJSONFile` in its slot: the body read once (`readJSONUpload`), then the keys it carried
    /// checked in Parse Server's order, then the decoded file stored or refused.
    private static func decodeJSONFile(_ request: HTTPRequest, _ keys: KeyChecker, _ context: Context) throws
        -> HTTPResponse
    {
        let read = try readJSONUpload(request, context)
        defer { read.spool.remove() }
        func string(_ key: String) throws -> String? {
            switch read.scanner.members[key] {
            case nil: return nil
            case .string(let text): return text
            // Parse Server: a key member that is not a string is an invalid request (403).
            case .notString: throw ParseUnauthorized(reason: "the JSON upload's \(key) is not a string")
            // Longer than any session token: refused as one (209) by the caller's check.
            case .overlong(let prefix) where key == "_SessionToken": return prefix
            case .overlong: throw ParseUnauthorized(reason: "the JSON upload's \(key) is too long")
            }
        }
        let bodyKeys = KeyChecker.Keys(
            appID: try string("_ApplicationId"), restKey: try string("_JavaScriptKey"),
            masterKey: try string("_MasterKey"))
        guard bodyKeys.appID != nil else { throw ParseUnauthorized(reason: "the JSON upload has no _ApplicationId") }
        // The keys' access, worked out once: refused with the key that failed, else the caller's.
        let access = keys.access(request, bodyKeys: bodyKeys)
        guard access != .none else {
            switch keys.refused(bodyKeys) {
            case .appID?: throw ParseUnauthorized(reason: "the JSON upload's _ApplicationId is not this application's")
            case .restKey?: throw ParseUnauthorized(reason: "the JSON upload's _JavaScriptKey is missing or wrong")
            case nil: throw ParseUnauthorized()
            }
        }
        let caller = try context.sessions.caller(request, access: access, bodyToken: try string("_SessionToken"))
        guard caller != .anonymous else { throw publicUploadRefused() }
        let name = try validUploadName(request)
        guard read.scanner.base64 == .string else {
            throw ParseError(
                code: ParseError.Code.fileSaveError, message: "The JSON upload has no base64 string with the file.")
        }
        let decoded = try read.spool.result()
        return try storeUpload(
            at: decoded.path, sha256: decoded.sha256, byteSize: decoded.byteSize, name: name, uploader: caller.userId,
            context: context)
    }

    /// Bytes of a spooled body read at a time.
    static let jsonUploadReadBytes = 64 * 1024

    /// Reads the body once, in `jsonUploadReadBytes` pieces: its key members kept, its base64 decoded
    /// into a spool file as it is read. Not a JSON object (Parse Server's `JSON.parse` failing): 403,
    /// with the spool file removed; a base64 or disk error is kept for after the keys' check.
    private static func readJSONUpload(_ request: HTTPRequest, _ context: Context) throws
        -> (scanner: JSONUploadScanner, spool: JSONUploadSpool)
    {
        let spool = JSONUploadSpool(
            directory: context.store.spoolDirectory,
            reservation: (request.bodyObserver as? JSONUploadBodyObserver)?
                .reservation, jsonBytes: request.body.count)
        var scanner = JSONUploadScanner(maxDepth: context.configuration.maxJSONDepth + 3)
        do {
            try readBody(request.body) { piece in try scanner.feed(piece) { spool.decode($0) } }
            try scanner.finish()
        } catch let error as JSONUploadScanner.Malformed {
            spool.remove()
            throw ParseUnauthorized(reason: error.description)
        } catch {
            spool.remove()
            throw error
        }
        return (scanner, spool)
    }

    /// Hands `body` to `consume` in pieces of at most `jsonUploadReadBytes`, reading a spooled body
    /// from its file, so that it is never in memory whole.
    static func readBody(_ body: HTTPRequestBody, _ consume: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        switch body {
        case .empty:
            return
        case .bytes(let bytes):
            try bytes.withUnsafeBufferPointer { all in
                var start = 0
                while start < all.count {
                    let end = min(all.count, start + jsonUploadReadBytes)
                    try consume(UnsafeBufferPointer(rebasing: all[start..<end]))
                    start = end
                }
            }
        case .file(let path, _):
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ParseError.internalServerError("cannot open the spooled upload body") }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: jsonUploadReadBytes)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count >= 0 else { throw ParseError.internalServerError("cannot read the spooled upload body") }
                if count == 0 { return }
                try buffer.withUnsafeBufferPointer { try consume(UnsafeBufferPointer(rebasing: $0[0..<count])) }
            }
        }
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
            default:
                throw ParseUnauthorized(reason: "no X-Parse-Application-Id header, and the body is not a JSON object")
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
