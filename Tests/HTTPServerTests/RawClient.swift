// The raw-socket client lives in GalleryTestSupport, shared with the other test targets; the
// import is re-exported so every file here sees it, and the old name keeps working.
@_exported import GalleryTestSupport
import Testing

/// The shared raw-socket client under this target's old name.
typealias RawClient = RawHTTPClient

extension RawHTTPClient {
    /// Reads the server's next answer and expects it to be its last on this connection: `status`,
    /// `Connection: close`, then the server closing. How the server answers what it will not read
    /// further (a refused body, a request it cannot parse, HTTP/1.0 without keep-alive).
    func expectClosingAnswer(
        _ status: Int, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let response = try readResponse()
        #expect(response.status == status, comment, sourceLocation: sourceLocation)
        #expect(response.headers["Connection"] == "close", comment, sourceLocation: sourceLocation)
        #expect(isClosedByServer(), comment, sourceLocation: sourceLocation)
    }
}
