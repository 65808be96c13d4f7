/// Receives what the server does, for access logs and operational messages.
public protocol HTTPServerObserver: Sendable {
    /// Called once per response written, on the connection's queue; keep it cheap.
    /// `path` never includes the query string.
    func requestCompleted(method: String, path: String, status: Int, seconds: Double)
    /// Called for server-level events worth a log line (accept failures, connection cap reached).
    func serverEvent(level: String, message: String)
}
