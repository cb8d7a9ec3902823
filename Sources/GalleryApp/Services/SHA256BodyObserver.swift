import Crypto
import Foundation
import HTTPServer

/// Hashes a request body with SHA-256 while it streams in, so an upload's content address is
/// known when the body has arrived, without reading the spooled file again.
public final class SHA256BodyObserver: HTTPBodyObserver, @unchecked Sendable {
    private var hasher = SHA256()
    private var finished: String?

    public init() {}

    public func consume(_ chunk: UnsafeRawBufferPointer) { hasher.update(bufferPointer: chunk) }

    /// The digest as lowercase hex; call once the body is complete.
    public var hexDigest: String {
        if let finished { return finished }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        finished = digest
        return digest
    }
}
