import Foundation

/// A request method (RFC 9110 §9). An open set, so a struct with the common methods as static members.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token exactly as it appeared on the request line (methods are case-sensitive).
    public let rawValue: String

    /// Wraps a method token.
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    public var description: String { rawValue }

    /// Methods are case-sensitive tokens: tokens of different lengths differ without a string
    /// comparison (every request compares its method with the routes' and with `OPTIONS`).
    /// Inlined: a request compares its method a few times (the router, HEAD's body), most often
    /// with one of another length, answered by the length alone (decision 041, round 8).
    @inline(__always)
    public static func == (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool {
        lhs.rawValue.utf8.count == rhs.rawValue.utf8.count && lhs.rawValue == rhs.rawValue
    }

    /// The method of a request line's token, the common ones without making a string.
    static func parse(_ token: UnsafeRawBufferPointer) -> HTTPMethod {
        func equals(_ literal: StaticString) -> Bool {
            literal.utf8CodeUnitCount == token.count
                && memcmp(token.baseAddress!, literal.utf8Start, token.count) == 0
        }
        switch token.count {
        case 3 where equals("GET"): return .get
        case 3 where equals("PUT"): return .put
        case 4 where equals("HEAD"): return .head
        case 4 where equals("POST"): return .post
        case 5 where equals("PATCH"): return .patch
        case 6 where equals("DELETE"): return .delete
        case 7 where equals("OPTIONS"): return .options
        default: return HTTPMethod(rawValue: String(decoding: token, as: UTF8.self))
        }
    }
}
