/// One request to the object store, before signing: method, unencoded path and query, headers
/// (without host and the signature headers), and where the body comes from.
public struct S3HTTPRequest: Sendable {
    /// Where a request body comes from.
    public enum Body: Sendable {
        /// No body.
        case none
        /// Bytes in memory (small XML documents, derivatives).
        case bytes([UInt8])
        /// A byte range of a file, streamed from disk (originals, multipart parts).
        case file(path: String, offset: Int64, length: Int64)

        /// The number of body bytes.
        public var length: Int64 {
            switch self {
            case .none: return 0
            case .bytes(let bytes): return Int64(bytes.count)
            case .file(_, _, let length): return length
            }
        }
    }

    /// `GET`, `PUT`, `HEAD`, `DELETE`, `POST`.
    public var method: String
    /// The path, not percent-encoded.
    public var path: String
    /// Query parameters, not percent-encoded.
    public var query: [(String, String)]
    /// Extra headers to send and sign (e.g. `range`, `content-type`).
    public var headers: [(String, String)]
    /// The body.
    public var body: Body

    /// A request; `query`, `headers` and `body` default to empty.
    public init(
        method: String, path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: Body = .none
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}
