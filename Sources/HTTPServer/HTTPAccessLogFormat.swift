/// How access log lines are written: a readable line, one JSON object per line for log shippers,
/// or none at all.
public enum HTTPAccessLogFormat: String, Sendable, CaseIterable {
    /// `2026-11-23T05:57:02Z 127.0.0.1:40312 "GET /health" 200 164 0.041ms 3f2a-0.1` (bytes: all sent, head included)
    case text
    /// `{"time":"2026-11-23T05:57:02Z","remote":"127.0.0.1:40312","method":"GET","path":"/health",…}`
    case json
    /// No access log.
    case off
}
