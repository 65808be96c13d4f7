import BrokerHTTP

/// Turns the server's events into log lines: one per request (method, path without
/// query, status, duration) and one per server event.
struct AccessLog: HTTPServerObserver {
    let logger: BrokerLogger
    let enabled: Bool

    func requestCompleted(method: String, path: String, status: Int, seconds: Double) {
        guard enabled else { return }
        logger.log(
            status >= 500 ? .error : .info, "request",
            [
                ("method", .string(method)), ("path", .string(Self.loggable(path))),
                ("status", .int(status)), ("duration_ms", .double(seconds * 1000, decimals: 3)),
            ])
    }

    /// `path` as logged: the state in `/flows/{state}` is left out, since a pending flow's state is half of what
    /// completes it (the other half, the code, never reaches the broker's logs either).
    static func loggable(_ path: String) -> String {
        path.hasPrefix(OAuthHandlers.flowsPrefix) ? OAuthHandlers.flowsPrefix + "{state}" : path
    }

    func serverEvent(level: String, message: String) {
        logger.log(BrokerLogger.Level(rawValue: level) ?? .info, message)
    }
}
