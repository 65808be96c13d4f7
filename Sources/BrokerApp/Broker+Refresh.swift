import BrokerCore

extension Broker {
    /// Logs one refresh call: "token refreshed" or "refresh failed" with provider, account id and reason code, never a token.
    static func log(_ event: RefreshCoordinator.Event, to logger: BrokerLogger) {
        let fields: [(String, LogValue)] = [("provider", .string(event.provider)), ("account", .string(event.accountID))]
        switch event.result {
        case .refreshed:
            logger.log(.info, "token refreshed", fields)
        case .failed(let reason, let message):
            logger.log(.warning, "refresh failed", fields + [("reason", .string(reason.rawValue)), ("error", .string(message))])
        }
    }
}
