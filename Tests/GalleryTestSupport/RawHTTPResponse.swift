/// One HTTP response as `RawHTTPClient` read it.
public struct RawHTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: RawHTTPHeaders
    /// The body bytes (after the head; not de-chunked).
    public var body: [UInt8]

    /// A response with these parts.
    public init(status: Int, headers: RawHTTPHeaders, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The first value of the header `name`, nil when absent.
    public func header(_ name: String) -> String? { headers[name] }
}
