/// The head of an object store's answer: status and headers. The body went to the caller's sink
/// (for 2xx) or into `errorBody` (for anything else, small XML).
public struct S3HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields, names lower-cased.
    public var headers: [String: String]
    /// The body of a non-2xx answer (an S3 XML error document), empty otherwise.
    public var errorBody: [UInt8]

    /// A response.
    public init(status: Int, headers: [String: String], errorBody: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.errorBody = errorBody
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The value of a header (name in any case).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
