import Foundation

/// Builds responses for stored files the way a static file server does: strong ETag,
/// Last-Modified, conditional requests (RFC 9110 §13) and single byte ranges (RFC 9110 §14).
public enum HTTPFileResponse {
    /// What a file response needs to know about the file.
    public struct File: Sendable {
        /// The file's path: opened when the body is written if there is no `descriptor`, otherwise
        /// only named in logs (it may then be relative, e.g. a blob key).
        public var path: String
        /// Size in bytes.
        public var size: Int
        /// A strong entity tag, quoted (`"abc"`).
        public var etag: String
        /// Last modification time.
        public var lastModified: Date
        /// `lastModified` already formatted as an IMF-fixdate (kept by a cache of open files), or
        /// nil to format it for this response.
        public var lastModifiedText: String?
        /// The `Content-Type`.
        public var contentType: String
        /// The file already opened by the caller (the bytes are sent from it, with no second path
        /// lookup), or nil to open `path` when the body is written.
        public var descriptor: HTTPFileDescriptor?

        public init(
            path: String, size: Int, etag: String, lastModified: Date, contentType: String,
            descriptor: HTTPFileDescriptor? = nil, lastModifiedText: String? = nil
        ) {
            self.path = path
            self.size = size
            self.etag = etag
            self.lastModified = lastModified
            self.contentType = contentType
            self.descriptor = descriptor
            self.lastModifiedText = lastModifiedText
        }

        /// The body for `length` bytes from `offset`.
        func body(offset: Int, length: Int) -> HTTPResponseBody {
            if let descriptor { return .descriptor(descriptor, offset: offset, length: length) }
            return .file(path: path, offset: offset, length: length)
        }
    }

    /// The response to a GET or HEAD of `file`: 200, 206 for a satisfiable single range,
    /// 304 when a validator matches, 412 for a failed `If-Match`/`If-Unmodified-Since`,
    /// 416 with `Content-Range: bytes */size` for an unsatisfiable range.
    /// `headers` (e.g. `Cache-Control`) are added to every answer; they must not set the fields
    /// this function sets. The file is taken, not borrowed: a caller that made it for this answer
    /// (the bucket, on every request) hands it over without a copy of its strings (decision 041).
    public static func make(
        for request: HTTPRequest, file: consuming File, headers extra: HTTPHeaders = HTTPHeaders()
    ) -> HTTPResponse {
        var headers = extra
        headers.reserve(extra.count + 6)
        headers.add("ETag", file.etag)
        headers.add("Last-Modified", file.lastModifiedText ?? HTTPFileResponse.imfFixdate(file.lastModified))
        let seconds = file.lastModified.timeIntervalSince1970.rounded(.down)
        let fields = Preconditions(request.headers)

        // RFC 9110 §13.2.2: If-Match, then If-Unmodified-Since, then If-None-Match, then If-Modified-Since.
        if let ifMatch = fields.ifMatch {
            if !entityTagList(ifMatch, matches: file.etag, weak: false) {
                return HTTPResponse(status: .preconditionFailed, headers: headers)
            }
        } else if let since = fields.ifUnmodifiedSince, let date = parseHTTPDate(since),
            seconds > date.timeIntervalSince1970
        {
            return HTTPResponse(status: .preconditionFailed, headers: headers)
        }
        if let ifNoneMatch = fields.ifNoneMatch {
            if entityTagList(ifNoneMatch, matches: file.etag, weak: true) {
                return HTTPResponse(status: .notModified, headers: headers)
            }
        } else if let since = fields.ifModifiedSince, let date = parseHTTPDate(since),
            seconds <= date.timeIntervalSince1970
        {
            return HTTPResponse(status: .notModified, headers: headers)
        }

        headers.add("Accept-Ranges", "bytes")
        let whole = file.body(offset: 0, length: file.size)
        guard let rangeHeader = fields.range else {
            headers.add("Content-Type", file.contentType)
            return HTTPResponse(status: .ok, headers: headers, body: whole)
        }
        // If-Range (RFC 9110 §13.1.5): serve the range only if the validator still matches, else the whole file.
        if let ifRange = fields.ifRange {
            let matches: Bool
            if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
                matches = ifRange == file.etag
            } else if let date = parseHTTPDate(ifRange) {
                matches = seconds == date.timeIntervalSince1970
            } else {
                matches = false
            }
            if !matches {
                headers.add("Content-Type", file.contentType)
                return HTTPResponse(status: .ok, headers: headers, body: whole)
            }
        }
        switch parseRange(rangeHeader, size: file.size) {
        case .none:
            // Not a bytes range we understand, or several ranges: a server may ignore Range (§14.2).
            headers.add("Content-Type", file.contentType)
            return HTTPResponse(status: .ok, headers: headers, body: whole)
        case .unsatisfiable:
            headers.add("Content-Range", "bytes */\(file.size)")
            return HTTPResponse(status: .rangeNotSatisfiable, headers: headers)
        case .range(let range):
            headers.add("Content-Type", file.contentType)
            headers.add("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(file.size)")
            return HTTPResponse(
                status: .partialContent, headers: headers,
                body: file.body(offset: range.lowerBound, length: range.count))
        }
    }

    /// The request fields a file answer depends on (the first of each name, as `HTTPHeaders`'
    /// subscript gives it), found in one pass over the request's fields rather than one per name:
    /// most requests carry none of them, and each field is then told apart by its length alone.
    /// Where each was found is kept as its index in the list, and its value read only when asked
    /// for: six strings copied and destroyed per answer cost more than the search (decision 041).
    private struct Preconditions {
        private let fields: [HTTPHeaders.Field]
        private var ifMatchAt = -1
        private var ifUnmodifiedSinceAt = -1
        private var ifNoneMatchAt = -1
        private var ifModifiedSinceAt = -1
        private var rangeAt = -1
        private var ifRangeAt = -1

        init(_ headers: HTTPHeaders) {
            fields = headers.fields
            for index in fields.indices {
                let name = fields[index].name
                switch name.utf8.count {
                case 5 where rangeAt < 0 && name.caseInsensitiveEquals("Range"):
                    rangeAt = index
                case 8 where ifMatchAt < 0 && name.caseInsensitiveEquals("If-Match"):
                    ifMatchAt = index
                case 8 where ifRangeAt < 0 && name.caseInsensitiveEquals("If-Range"):
                    ifRangeAt = index
                case 13 where ifNoneMatchAt < 0 && name.caseInsensitiveEquals("If-None-Match"):
                    ifNoneMatchAt = index
                case 17 where ifModifiedSinceAt < 0 && name.caseInsensitiveEquals("If-Modified-Since"):
                    ifModifiedSinceAt = index
                case 19 where ifUnmodifiedSinceAt < 0 && name.caseInsensitiveEquals("If-Unmodified-Since"):
                    ifUnmodifiedSinceAt = index
                default:
                    break
                }
            }
        }

        private func value(_ index: Int) -> String? { index < 0 ? nil : fields[index].value }

        var ifMatch: String? { value(ifMatchAt) }
        var ifUnmodifiedSince: String? { value(ifUnmodifiedSinceAt) }
        var ifNoneMatch: String? { value(ifNoneMatchAt) }
        var ifModifiedSince: String? { value(ifModifiedSinceAt) }
        var range: String? { value(rangeAt) }
        var ifRange: String? { value(ifRangeAt) }
    }

    /// The result of reading a `Range` header against a representation of `size` bytes.
    public enum RangeResult: Equatable {
        /// Ignore the header and send the whole representation.
        case none
        /// One satisfiable range (half-open).
        case range(Range<Int>)
        /// A syntactically valid byte range that no byte of the file satisfies.
        case unsatisfiable
    }

    /// Parses `bytes=a-b`, `bytes=a-` and `bytes=-n` (RFC 9110 §14.1.2). Multiple ranges and other
    /// units are answered with the whole file (`.none`), which the RFC allows.
    public static func parseRange(_ header: String, size: Int) -> RangeResult {
        let value = header.trimmingSpaces()
        guard value.lowercased().hasPrefix("bytes=") else { return .none }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(",") else { return .none }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .none }
        let first = parts[0].trimmingCharacters(in: .whitespaces)
        let last = parts[1].trimmingCharacters(in: .whitespaces)
        func number(_ s: String) -> Int? {
            guard !s.isEmpty, s.count <= 18, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(s)
        }
        if first.isEmpty {
            guard let suffix = number(last) else { return .none }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .range(max(0, size - suffix)..<size)
        }
        guard let start = number(first) else { return .none }
        let end: Int
        if last.isEmpty {
            end = size - 1
        } else {
            guard let e = number(last) else { return .none }
            guard e >= start else { return .none }
            end = min(e, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .range(start..<(end + 1))
    }

    /// Whether an `If-Match`/`If-None-Match` list names the tag (`*` matches any). Weak comparison
    /// ignores `W/` prefixes (§8.8.3.2), as If-None-Match requires; strong comparison does not.
    static func entityTagList(_ list: String, matches tag: String, weak: Bool) -> Bool {
        let trimmed = list.trimmingSpaces()
        if trimmed == "*" { return true }
        func normal(_ t: String) -> String { weak && t.hasPrefix("W/") ? String(t.dropFirst(2)) : t }
        for candidate in trimmed.split(separator: ",") {
            let c = String(candidate).trimmingSpaces()
            if !weak && c.hasPrefix("W/") { continue }
            if normal(c) == normal(tag) { return true }
        }
        return false
    }

    /// A date as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7).
    public static func imfFixdate(_ date: Date) -> String {
        HTTPDate.format(Int(date.timeIntervalSince1970.rounded(.down)))
    }

    /// Parses an IMF-fixdate; nil for anything else.
    public static func parseHTTPDate(_ text: String) -> Date? { HTTPDate.parse(text) }
}
