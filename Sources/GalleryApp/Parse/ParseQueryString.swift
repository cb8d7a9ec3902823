import HTTPServer

/// Decodes a URL query component (`where=%7B%7D&limit=10`) into name/value pairs the way
/// HTML forms and Parse SDKs encode them (`HTTPQueryString`), refusing malformed escapes and
/// invalid UTF-8 with Parse's 102 instead of silently replacing bytes.
public enum ParseQueryString {
    /// The decoded `(name, value)` pairs in order; a pair without `=` has an empty value and
    /// empty segments (`a=1&&b=2`) are skipped.
    public static func decode(_ query: Substring) throws -> [(name: String, value: String)] {
        do {
            return try HTTPQueryString.decode(query)
        } catch .malformedPercentEncoding {
            throw ParseError.invalidQuery("malformed percent-encoding in query string")
        } catch .invalidUTF8 {
            throw ParseError.invalidQuery("invalid UTF-8 in query string")
        }
    }

    /// Like `decode(_:)` for a `String`.
    public static func decode(_ query: String) throws -> [(name: String, value: String)] {
        try decode(Substring(query))
    }
}
