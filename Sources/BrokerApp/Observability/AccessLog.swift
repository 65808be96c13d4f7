import BrokerHTTP

/// Turns the server's events into log lines: one per request (method, path without
/// query, status, duration, request id, and the API key's name when one was presented) and one per server event.
struct AccessLog: HTTPServerObserver {
    let logger: BrokerLogger
    let enabled: Bool
    /// Names the caller's API key; nil logs no caller.
    let access: AccessControl?

    init(logger: BrokerLogger, enabled: Bool, access: AccessControl? = nil) {
        self.logger = logger
        self.enabled = enabled
        self.access = access
    }

    func requestCompleted(method: String, path: String, status: Int, seconds: Double) {
        requestCompleted(CompletedRequest(method: method, path: path, status: status, seconds: seconds, requestID: nil, head: nil))
    }

    func requestCompleted(_ c: CompletedRequest) {
        guard enabled else { return }
        var fields: [(String, LogValue)] = [
            ("method", .string(c.method)), ("path", .string(Self.loggable(c.path))),
            ("status", .int(c.status)), ("duration_ms", .double(c.seconds * 1000, decimals: 3)),
        ]
        if let id = c.requestID { fields.append(("request_id", .string(id))) }
        // Only requests that sent `Authorization` pay for the key comparison (the lookup fails first otherwise).
        if let access, let head = c.head, let name = access.caller(headers: head.headers) {
            fields.append(("caller", .string(name)))
        }
        logger.log(status(c.status), "request", fields)
    }

    private func status(_ code: Int) -> BrokerLogger.Level { code >= 500 ? .error : .info }

    /// `path` as logged: the state in `/flows/{state}` is left out, since a pending flow's state is half of what
    /// completes it (the other half, the code, never reaches the broker's logs either).
    static func loggable(_ path: String) -> String {
        path.hasPrefix(OAuthHandlers.flowsPrefix) ? OAuthHandlers.flowsPrefix + "{state}" : path
    }

    func serverEvent(level: String, message: String) {
        logger.log(BrokerLogger.Level(rawValue: level) ?? .info, message)
    }
}
