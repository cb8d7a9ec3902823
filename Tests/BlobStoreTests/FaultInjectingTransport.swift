import Foundation
import Synchronization

@testable import BlobStore

/// Wraps a real transport and answers some requests itself instead: the first `failFirst` with
/// `status` (an S3 XML error), and any whose target contains `failTargetsContaining` with 400.
/// Counts what it saw, so tests can tell how often a request was tried.
final class FaultInjectingTransport: S3Transport, Sendable {
    let wrapped: S3Transport
    let failFirst: Int
    let status: Int
    let code: String
    let failTargetsContaining: String?
    private let seen = Mutex<[String]>([])

    /// The requests seen so far, as "METHOD target".
    var requests: [String] { seen.withLock { $0 } }

    init(
        _ wrapped: S3Transport, failFirst: Int = 0, status: Int = 503, code: String = "SlowDown",
        failTargetsContaining: String? = nil
    ) {
        self.wrapped = wrapped
        self.failFirst = failFirst
        self.status = status
        self.code = code
        self.failTargetsContaining = failTargetsContaining
    }

    var requestCount: Int {
        seen.withLock { $0.count }
    }

    func send(
        method: String, target: String, headers: [(String, String)], body: S3HTTPRequest.Body,
        head: (S3HTTPResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> S3HTTPResponse {
        let count = seen.withLock { requests in
            requests.append("\(method) \(target)")
            return requests.count
        }
        if count <= failFirst {
            return S3HTTPResponse(
                status: status, headers: [:],
                errorBody: Array("<Error><Code>\(code)</Code><Message>injected</Message></Error>".utf8))
        }
        if let marker = failTargetsContaining, target.contains(marker) {
            return S3HTTPResponse(
                status: 400, headers: [:],
                errorBody: Array("<Error><Code>InvalidPart</Code><Message>injected</Message></Error>".utf8))
        }
        return try wrapped.send(method: method, target: target, headers: headers, body: body, head: head, sink: sink)
    }
}
