/// Receives what the server does, for access logs and operational messages.
public protocol HTTPServerObserver: Sendable {
    /// Called once per response written, on the connection's queue; keep it cheap.
    /// `path` never includes the query string.
    func requestCompleted(method: String, path: String, status: Int, seconds: Double)
    /// As ``requestCompleted(method:path:status:seconds:)``, with the request's id and head.
    func requestCompleted(_ completed: CompletedRequest)
    /// Called for server-level events worth a log line (accept failures, connection cap reached).
    func serverEvent(level: String, message: String)
}

extension HTTPServerObserver {
    /// Observers that log neither ids nor headers get the short call.
    public func requestCompleted(_ completed: CompletedRequest) {
        requestCompleted(method: completed.method, path: completed.path, status: completed.status, seconds: completed.seconds)
    }
}

/// One response written, as an observer sees it.
public struct CompletedRequest: Sendable {
    /// The request method, or `-` when no head was parsed.
    public let method: String
    /// The request path without the query, or `-` when no head was parsed.
    public let path: String
    /// The status sent.
    public let status: Int
    /// Seconds from the request's first byte (or the end of the previous one) to the response.
    public let seconds: Double
    /// The request's id (``Request/id``); nil when the response went out before a whole request was read.
    public let requestID: String?
    /// The request's head, when one was parsed.
    public let head: HTTPRequestHead?

    /// Creates a record; the server is the usual source.
    public init(method: String, path: String, status: Int, seconds: Double, requestID: String?, head: HTTPRequestHead?) {
        self.method = method
        self.path = path
        self.status = status
        self.seconds = seconds
        self.requestID = requestID
        self.head = head
    }
}
