/// Whether a statement may be sent again, on a fresh session, after the session died once it was
/// sent (a server restart, a terminated backend) and no transaction was open. Only the caller knows
/// what its SQL does, so the caller says it; the default everywhere is `.never`.
public enum PostgresRetry: Sendable {
    /// Running the statement twice acts as running it once: it only reads (no row locks, no
    /// notification, no sequence, no function that writes), or it is idempotent (`BEGIN`).
    case safe
    /// The statement may have acted before the session died and a second run could act again:
    /// `connectionClosed` is thrown instead, and the caller answers "try again". A statement libpq
    /// could not send at all is still sent on the fresh session, and a session the server already
    /// ended is replaced before the statement goes out.
    case never
}
