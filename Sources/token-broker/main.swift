// token-broker: parse the sub-command, build the broker, run it, stop on SIGTERM/SIGINT.
import BrokerApp
import Dispatch
import Foundation

/// Reports a failure before the broker runs and exits with `status`: one JSON log line when
/// BROKER_LOG_FORMAT=json (so every line the process writes parses), else a sentence on stderr.
func fail(_ message: String, _ reason: String, status: Int32, usage: Bool = false) -> Never {
    if ProcessInfo.processInfo.environment["BROKER_LOG_FORMAT"] == "json" {
        let logger = BrokerLogger(format: .json)
        logger.log(.error, message, [("reason", .string(reason))])
        logger.flush()
    } else {
        FileHandle.standardError.write(Data("token-broker: \(message): \(reason)\n\(usage ? BrokerCommand.usage + "\n" : "")".utf8))
    }
    exit(status)
}

let command: BrokerCommand
switch BrokerCommand.parse(Array(CommandLine.arguments.dropFirst())) {
case .success(let parsed):
    command = parsed
case .failure(let error):
    fail("invalid arguments", "\(error)", status: 2, usage: true)
}

/// The process environment with every secret given as a file (`BROKER_API_KEY_FILE`) read into its variable.
func environment() -> [String: String] {
    do {
        return try BrokerConfiguration.environmentReadingSecretFiles(ProcessInfo.processInfo.environment)
    } catch {
        fail("invalid configuration", "\(error)", status: 2)
    }
}

// Commands that need no configuration run before it is read: help never depends on the environment,
// the accounts and backup commands, clients of a broker that may run elsewhere, read only BROKER_URL and BROKER_API_KEY,
// and restore reads only BROKER_DATA_DIR and BROKER_ENCRYPTION_KEY.
switch command {
case .help(let topic):
    print(BrokerCommand.usage(of: topic))
    exit(0)
case .version:
    print("token-broker \(BrokerVersion.current)")
    exit(0)
case .accounts(let accounts):
    // A deletion revokes at the provider and cannot be undone: asked on a terminal, refused elsewhere without --yes.
    let declined = AccountsClient.confirmation(accounts, isTerminal: isatty(STDIN_FILENO) == 1) { question in
        FileHandle.standardError.write(Data(question.utf8))
        return readLine()
    }
    if let declined, let failure = declined.failure { fail(failure.headline, failure.reason, status: declined.status) }
    let outcome = await AccountsClient.run(accounts, environment: environment())
    // An import reports every line, the failed ones too, before it says that some failed.
    if outcome.failure != nil, !outcome.output.isEmpty { print(outcome.output) }
    if let failure = outcome.failure { fail(failure.headline, failure.reason, status: outcome.status) }
    print(outcome.output)
    exit(0)
case .backup(let json):
    let outcome = await BackupClient.run(json: json, environment: environment())
    if let failure = outcome.failure { fail(failure.headline, failure.reason, status: outcome.status) }
    print(outcome.output)
    exit(0)
case .restore(let restore):
    // Offline, on the data directory alone: it needs neither providers nor a listening port.
    let outcome = restore.run(environment: environment())
    if let failure = outcome.failure { fail(failure.headline, failure.reason, status: outcome.status) }
    print(outcome.output)
    exit(0)
case .serve, .demo, .healthcheck, .rekey, .configCheck, .webhooks, .migrate:
    break
}

// `demo` starts its own provider and reads its own configuration from the environment; nothing else does.
let demo: Demo?
let configuration: BrokerConfiguration
do {
    demo = command == .demo ? try Demo.prepare(environment: environment()) : nil
    // `healthcheck` only asks a running broker: a providers file changed since its start must not fail it.
    configuration =
        try demo?.configuration
        ?? BrokerConfiguration.from(environment: environment(), readingProviders: command != .healthcheck)
} catch let error as ConfigurationError {
    fail("invalid configuration", "\(error)", status: 2)
} catch {
    fail("start-up failed", "\(error)", status: 1)
}

switch command {
case .serve, .demo, .help, .version, .accounts, .backup, .restore:
    break
case .migrate(let migrate):
    let logger = BrokerLogger(format: configuration.logFormat)
    let (status, output) = await migrate.run(configuration: configuration, environment: environment(), logger: logger)
    logger.flush()
    if status != 0 { fail("migrate failed", output, status: status) }
    print(output)
    exit(0)
case .configCheck:
    print(ConfigCheck.report(configuration))
    exit(0)
case .webhooks(let webhooks):
    let (status, output) = await webhooks.run(configuration: configuration, environment: environment())
    if status != 0 { fail("webhooks failed", output, status: status) }
    print(output)
    exit(0)
case .healthcheck:
    let (status, reason) = HealthCheck.check(configuration: configuration)
    if let reason { fail("healthcheck failed", reason, status: status) }
    exit(status)
case .rekey(dryRun: true):
    do {
        // PostgreSQL is read over the network; the data directory (files, and Redis's generated key) from disk.
        let plan =
            configuration.postgresStore != nil
            ? try await RekeyDryRun.planPostgres(configuration: configuration) : try RekeyDryRun.plan(configuration: configuration)
        print(plan.report)
        exit(0)
    } catch {
        fail("rekey --dry-run failed", "\(error)", status: error is ConfigurationError ? 2 : 1)
    }
case .rekey(dryRun: false):
    let logger = BrokerLogger(format: configuration.logFormat)
    do {
        let result = try await Broker.rekey(configuration: configuration, logger: logger)
        logger.log(
            .info, "rekey done",
            [
                ("rewritten", .int(result.rewritten)), ("total", .int(result.total)),
                ("key_id", .string(result.keyID)),
            ])
        logger.flush()
        exit(0)
    } catch {
        logger.log(.error, "rekey failed", [("reason", .string("\(error)"))])
        logger.flush()
        exit(error is ConfigurationError ? 2 : 1)
    }
}

let logger = BrokerLogger(format: configuration.logFormat)
// Every connection holds a descriptor: take all the process may have before the connection cap is drawn from it.
Broker.raiseOpenFileLimit()
let broker: Broker
do {
    broker = try await Broker.make(configuration: configuration, logger: logger)
    try broker.start()
} catch {
    logger.log(.error, "start-up failed", [("reason", .string("\(error)"))])
    logger.flush()
    if let demo { await demo.cleanUp() }
    exit(error is ConfigurationError ? 2 : 1)
}

if let demo {
    logger.log(
        .info, "demo provider listening",
        [
            ("url", .string(demo.provider.baseURL)),
            ("token_lifetime_s", .int(demo.settings.tokenLifetime)),
        ])
    logger.flush()
    FileHandle.standardOutput.write(Data(demo.banner.utf8))
}
// A global, so the sources live as long as the process.
let signalSources = SignalHandling.install(broker: broker, logger: logger, afterShutdown: { await demo?.cleanUp() })
// Start-up awaits (Redis), so this is async top-level code and the main thread already runs
// the concurrency runtime's main loop; dispatchMain() here would take that thread away from it.
// Wait until a signal handler ends the process.
while true {
    try? await Task.sleep(nanoseconds: 3_600_000_000_000)
}
