// token-broker: parse the sub-command, build the broker, run it, stop on SIGTERM/SIGINT.
import BrokerApp
import Dispatch
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.first ?? "serve"
let usage = """
    usage: token-broker [serve | healthcheck | rekey | version | help]
      serve         run the broker (default); settings come from BROKER_* environment variables
      healthcheck   exit 0 when /healthz on the configured port answers 200, else 1
      rekey         re-encrypt every stored account with the current BROKER_ENCRYPTION_KEY, then exit
    """

let configuration: BrokerConfiguration
do {
    configuration = try BrokerConfiguration.from(environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("token-broker: invalid configuration: \(error)\n".utf8))
    exit(2)
}

switch command {
case "serve":
    break
case "healthcheck":
    exit(HealthCheck.run(configuration: configuration))
case "rekey":
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
case "version", "--version":
    print("token-broker 0.1.0")
    exit(0)
case "help", "--help", "-h":
    print(usage)
    exit(0)
default:
    FileHandle.standardError.write(Data("token-broker: unknown command \"\(command)\"\n\(usage)\n".utf8))
    exit(2)
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
