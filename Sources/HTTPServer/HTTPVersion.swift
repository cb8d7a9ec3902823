/// The HTTP versions this server speaks (RFC 9112 §2.3); anything else is answered with 505.
public enum HTTPVersion: String, Sendable {
    case http10 = "HTTP/1.0"
    case http11 = "HTTP/1.1"
}
