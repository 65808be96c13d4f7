import BrokerCore

extension Broker {
    /// Logs one refresh call: "token refreshed" or "refresh failed" with provider, account id and reason code, never a token.
    static func log(_ event: RefreshCoordinator.Event, to logger: BrokerLogger) {
        let fields: [(String, LogValue)] = [("provider", .string(event.provider)), ("account", .string(event.accountID.string))]
        switch event.result {
        case .refreshed:
            logger.log(.info, "token refreshed", fields)
            for warning in event.warnings {
                switch warning {
                case .notLongerLived:
                    logger.log(.warning, "refreshed token expires no later than the one it replaced", fields)
                case .extrasDropped:
                    logger.log(
                        .warning, "token answer's extra fields dropped: over \(TokenExtras.maximumBytes) bytes",
                        [("provider", .string(event.provider))])
                }
            }
        case .failed(let reason, let message):
            logger.log(.warning, "refresh failed", fields + [("reason", .string(reason.rawValue)), ("error", .string(message))])
        }
    }
}
