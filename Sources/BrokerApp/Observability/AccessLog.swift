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
                ("method", .string(method)), ("path", .string(path)),
                ("status", .int(status)), ("duration_ms", .double(seconds * 1000, decimals: 3)),
            ])
    }

    func serverEvent(level: String, message: String) {
        logger.log(BrokerLogger.Level(rawValue: level) ?? .info, message)
    }
}
