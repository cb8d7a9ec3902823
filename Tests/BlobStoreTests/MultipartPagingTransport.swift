import Foundation
import Synchronization

@testable import BlobStore

/// moto (5.2.5) answers ListMultipartUploads whole: every upload, `IsTruncated` false and no
/// `NextKeyMarker`, whatever `max-uploads`, `key-marker` and `upload-id-marker` say. This transport
/// pages moto's whole answer as S3's API reference describes it (uploads by key, then by start;
/// after `key-marker`, or after `upload-id-marker` among that key's uploads; `max-uploads` of them;
/// `NextKeyMarker` and `NextUploadIdMarker` naming a truncated page's last upload), so the store's
/// paging runs over moto's real uploads; every other request, the aborts among them, goes to moto
/// unchanged, and so does an answer moto truncated itself. It can also play a store that fails:
/// `failListings` makes the next list requests fail as a stopped server's would, `stuck` makes
/// a truncated page's markers the request's own, a listing that never moves, `shortPages` answers
/// fewer uploads a page than asked, and `failAborts` refuses the aborts of some keys.
final class MultipartPagingTransport: S3Transport, Sendable {
    let wrapped: S3Transport
    private struct State {
        var failListings = false
        var stuck = false
        var shortPages: Int?
        var failAborts: Set<String> = []
        var listings: [String] = []
    }
    private let state = Mutex(State())

    init(_ wrapped: S3Transport) {
        self.wrapped = wrapped
    }

    /// Whether the list requests fail (a connection refused, as with moto stopped).
    var failListings: Bool {
        get { state.withLock { $0.failListings } }
        set { state.withLock { $0.failListings = newValue } }
    }

    /// Whether a truncated page names the request's markers as the next page's.
    var stuck: Bool {
        get { state.withLock { $0.stuck } }
        set { state.withLock { $0.stuck = newValue } }
    }

    /// At most this many uploads a page, whatever `max-uploads` asks (S3 may answer fewer).
    var shortPages: Int? {
        get { state.withLock { $0.shortPages } }
        set { state.withLock { $0.shortPages = newValue } }
    }

    /// Keys (after the store's prefix) whose AbortMultipartUpload fails, as a policy denying it would.
    var failAborts: Set<String> {
        get { state.withLock { $0.failAborts } }
        set { state.withLock { $0.failAborts = newValue } }
    }

    /// The ListMultipartUploads targets seen, in order.
    var listings: [String] { state.withLock { $0.listings } }

    func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        head: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        let query = Self.query(target)
        if method == "DELETE", query["uploadId"] != nil {
            let path = target.prefix { $0 != "?" }
            let refused = state.withLock { $0.failAborts }.contains { path.hasSuffix("/" + $0) }
            if refused { throw S3TransportError("access denied (injected: the abort is refused)") }
        }
        guard method == "GET", query["uploads"] != nil else {
            return try wrapped.send(
                method: method, target: target, headers: headers, body: body, head: head, sink: sink)
        }
        let (fail, stuck, short) = state.withLock { state in
            state.listings.append(target)
            return (state.failListings, state.stuck, state.shortPages)
        }
        if fail { throw S3TransportError("connection refused (injected: the store stopped)") }
        var whole = [UInt8]()
        let response = try wrapped.send(
            method: method, target: target, headers: headers, body: body, head: head,
            sink: { whole.append(contentsOf: $0) })
        let text = String(decoding: whole, as: UTF8.self)
        guard response.isSuccess, S3XML.value("IsTruncated", in: text) != "true" else {
            try whole.withUnsafeBytes { try sink($0) }
            return response
        }
        let page = Self.page(of: text, query: query, stuck: stuck, shortPages: short)
        try Array(page.utf8).withUnsafeBytes { try sink($0) }
        return response
    }

    /// The page of `text`'s uploads that `query` asks for, as S3 would write it.
    static func page(of text: String, query: [String: String], stuck: Bool, shortPages: Int? = nil) -> String {
        let uploads = S3XML.elements("Upload", in: text).map { xml in
            (key: S3XML.value("Key", in: xml) ?? "", id: S3XML.value("UploadId", in: xml) ?? "", xml: xml)
        }
        // By key in UTF-8 order; a key's uploads stay in moto's order (the order they were started).
        let sorted = uploads.enumerated().sorted { a, b in
            a.element.key == b.element.key
                ? a.offset < b.offset : Array(a.element.key.utf8).lexicographicallyPrecedes(Array(b.element.key.utf8))
        }.map(\.element)
        var rest = sorted[...]
        if let keyMarker = query["key-marker"] {
            let idMarker = query["upload-id-marker"] ?? ""
            let sameKey = sorted.filter { $0.key == keyMarker }
            let afterId = sameKey.firstIndex { $0.id == idMarker }.map { sameKey[($0 + 1)...].map(\.id) } ?? []
            rest =
                sorted.filter { upload in
                    Array(keyMarker.utf8).lexicographicallyPrecedes(Array(upload.key.utf8))
                        || (upload.key == keyMarker && !idMarker.isEmpty && afterId.contains(upload.id))
                }[...]
        }
        let max = Int(query["max-uploads"] ?? "") ?? 1000
        let page = rest.prefix(Swift.min(max, shortPages ?? max))
        let truncated = rest.count > page.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListMultipartUploadsResult>"
        xml += "<KeyMarker>\(XMLText.escaped(query["key-marker"] ?? ""))</KeyMarker>"
        xml += "<UploadIdMarker>\(XMLText.escaped(query["upload-id-marker"] ?? ""))</UploadIdMarker>"
        if truncated, let last = page.last {
            let next =
                stuck && query["key-marker"] != nil
                ? (query["key-marker"]!, query["upload-id-marker"] ?? "") : (last.key, last.id)
            xml += "<NextKeyMarker>\(XMLText.escaped(next.0))</NextKeyMarker>"
            xml += "<NextUploadIdMarker>\(XMLText.escaped(next.1))</NextUploadIdMarker>"
        }
        xml += "<MaxUploads>\(max)</MaxUploads><IsTruncated>\(truncated)</IsTruncated>"
        xml += page.map { "<Upload>\($0.xml)</Upload>" }.joined() + "</ListMultipartUploadsResult>"
        return xml
    }

    /// A request target's query, decoded.
    static func query(_ target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            query[name] = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
        }
        return query
    }
}
