import BrokerCore

extension Broker {
    /// Logs one app token fetch: "app token fetched" or "app token fetch failed" with provider, scope and reason, never a token.
    static func log(_ event: AppTokenService.Event, to logger: BrokerLogger) {
        let fields: [(String, LogValue)] = [("provider", .string(event.provider)), ("scope", .string(event.scope))]
        if let error = event.error {
            logger.log(.warning, "app token fetch failed", fields + [("error", .string(error.code)), ("reason", .string(error.message))])
        } else {
            logger.log(.info, "app token fetched", fields)
        }
    }
}
