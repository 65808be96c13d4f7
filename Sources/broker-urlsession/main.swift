// broker-urlsession: `token-broker serve` with URLSession (FoundationNetworking, libcurl) carrying provider calls and
// webhook deliveries, for scripts/bench-broker's comparison with the native client. Not shipped: token-broker links
// no URLSession. Same environment as token-broker; no sub-commands.
import BrokerApp
import BrokerURLSession
import Foundation

let configuration: BrokerConfiguration
do {
    configuration = try BrokerConfiguration.from(environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("broker-urlsession: invalid configuration: \(error)\n".utf8))
    exit(2)
}
let logger = BrokerLogger(format: configuration.logFormat)
Broker.raiseOpenFileLimit()
let broker: Broker
do {
    broker = try await Broker.make(configuration: configuration, logger: logger, clients: .urlSession)
    try broker.start()
} catch {
    logger.log(.error, "start-up failed", [("reason", .string("\(error)"))])
    logger.flush()
    exit(error is ConfigurationError ? 2 : 1)
}
// A global, so the sources live as long as the process; a signal handler ends it.
let signalSources = SignalHandling.install(broker: broker, logger: logger)
while true {
    try? await Task.sleep(nanoseconds: 3_600_000_000_000)
}
