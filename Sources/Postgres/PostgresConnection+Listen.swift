import CLibpq
import Foundation

/// What `PostgresListener` needs from a session: its socket, quoting channel names, and reading
/// notifications as they arrive.
extension PostgresConnection {
    /// Quotes `identifier` for SQL with libpq's `PQescapeIdentifier` (`LISTEN` takes a channel name,
    /// not a parameter).
    func quoteIdentifier(_ identifier: String) throws -> String {
        let handle = try requireHandle()
        guard let quoted = PQescapeIdentifier(handle, identifier, identifier.utf8.count) else {
            throw PostgresError.invalidParameter(index: 0, reason: Self.errorMessage(handle))
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// The session's socket, to wait on with `poll`.
    func socketDescriptor() throws -> Int32 {
        let socket = PQsocket(try requireHandle())
        guard socket >= 0 else { throw PostgresError.connectionClosed(message: "the connection has no socket") }
        return socket
    }

    /// Reads what the server sent without blocking and returns the notifications received so far
    /// (and any already queued by earlier statements). Throws `connectionClosed` if the session
    /// ended and nothing arrived before the end; notifications read in the same pass as the end
    /// (sent just before a server restart) are returned first, and the next call throws.
    func receiveNotifications() throws -> [(channel: String, payload: String)] {
        let handle = try requireHandle()
        let consumed = PQconsumeInput(handle) == 1 && PQstatus(handle) == CONNECTION_OK
        var received: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            let channel = String(cString: notification.pointee.relname)
            let payload = notification.pointee.extra.map { String(cString: $0) } ?? ""
            received.append((channel, payload))
            PQfreemem(notification)
        }
        if !consumed && received.isEmpty {
            throw PostgresError.connectionClosed(message: Self.errorMessage(handle))
        }
        return received
    }
}
