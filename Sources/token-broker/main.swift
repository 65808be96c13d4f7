// token-broker: parse the sub-command, build the broker, run it, stop on SIGTERM/SIGINT.
import BrokerApp
import Dispatch
import Foundation

let command: BrokerCommand
switch BrokerCommand.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed):
    command = parsed
case .failure(let error):
    FileHandle.standardError.write(Data("token-broker: \(error)\n\(BrokerCommand.usage)\n".utf8))
    exit(2)
}

// Commands that need no configuration run before it is read: help never depends on the environment.
switch command {
case .help:
    print(BrokerCommand.usage)
    exit(0)
case .version:
    print("token-broker 0.1.0")
    exit(0)
case .serve, .healthcheck, .rekey:
    break
}

let configuration: BrokerConfiguration
do {
    configuration = try BrokerConfiguration.from(environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("token-broker: invalid configuration: \(error)\n".utf8))
    exit(2)
}

switch command {
case .serve, .help, .version:
    break
case .healthcheck:
    let (status, reason) = HealthCheck.check(configuration: configuration)
    if let reason { FileHandle.standardError.write(Data("token-broker healthcheck: \(reason)\n".utf8)) }
    exit(status)
case .rekey:
    let logger = BrokerLogger(format: configuration.logFormat)
    do {
        let result = try await Broker.rekey(configuration: configuration, logger: logger)
        logger.log(.info, "rekey done", [("rewritten", .int(result.rewritten)), ("total", .int(result.total)),
                                         ("key_id", .string(result.keyID))])
        logger.flush()
        exit(0)
    } catch {
        logger.log(.error, "rekey failed", [("reason", .string("\(error)"))])
        logger.flush()
        exit(error is ConfigurationError ? 2 : 1)
    }
}

let logger = BrokerLogger(format: configuration.logFormat)
let broker: Broker
do {
    broker = try Broker(configuration: configuration, logger: logger)
    try broker.start()
} catch {
    logger.log(.error, "start-up failed", [("reason", .string("\(error)"))])
    logger.flush()
    exit(error is ConfigurationError ? 2 : 1)
}

let signalSources = SignalHandling.install(broker: broker, logger: logger)
dispatchMain()
