import BrokerCore
import BrokerPostgres
import Foundation

/// `token-broker migrate --to postgres://…`: copies the configured store (the data directory's files, or Redis with
/// `BROKER_STORE=redis://…`) into PostgreSQL, then counts both sides (``StoreMigration``).
///
/// The URL is read like `BROKER_STORE=postgres://…`: the password in it or in `BROKER_STORE_PASSWORD_FILE`, md5
/// logins only with `BROKER_POSTGRES_ALLOW_MD5=1`. Exit status: 0 copied and the counts match; 1 failed, or the
/// counts differ (both are printed); 2 a bad argument or setting.
public struct MigrateCommand: Equatable, Sendable {
    /// The PostgreSQL URL to copy into.
    public var destination: String

    /// Creates a command.
    public init(destination: String) {
        self.destination = destination
    }

    /// Reads the arguments after `migrate`: `--to URL` (or `--to=URL`).
    static func parse(_ arguments: ArraySlice<String>) -> Result<MigrateCommand, BrokerCommand.UsageError> {
        var destination: String?
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument == "--to" || argument.hasPrefix("--to=") {
                let value = argument == "--to" ? rest.popFirst() : String(argument.dropFirst("--to=".count))
                guard let value, !value.isEmpty, !value.hasPrefix("-") else {
                    return .failure(BrokerCommand.UsageError(description: "--to needs a postgres:// URL"))
                }
                destination = value
            } else {
                return .failure(
                    BrokerCommand.UsageError(
                        description: argument.hasPrefix("-") ? "unknown flag \"\(argument)\"" : "unexpected argument \"\(argument)\""))
            }
        }
        guard let destination else {
            return .failure(BrokerCommand.UsageError(description: "migrate needs the destination: migrate --to postgres://…"))
        }
        return .success(MigrateCommand(destination: destination))
    }

    /// The destination's configuration; errors name `--to` and never the password.
    func destinationConfiguration(environment: [String: String]) throws(ConfigurationError) -> PostgresConfiguration {
        let scheme = destination.prefix { $0 != ":" }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw ConfigurationError(variable: "--to", message: "must be a postgres:// or postgresql:// URL")
        }
        do {
            return try BrokerConfiguration.postgresStore(destination, EnvironmentReader(environment))
        } catch {
            // The URL is read as BROKER_STORE would be; say which argument it was.
            throw ConfigurationError(
                variable: error.variable == "BROKER_STORE" ? "--to" : error.variable,
                message: error.message.replacingOccurrences(of: "BROKER_STORE carries", with: "--to carries"))
        }
    }

    /// Runs the copy; returns the exit status and what to print (the report, or why it failed).
    public func run(configuration: BrokerConfiguration, environment: [String: String], logger: BrokerLogger) async -> (Int32, String) {
        do {
            let destination = try destinationConfiguration(environment: environment)
            let report = try await StorageBackendFactory.migrate(configuration: configuration, to: destination, logger: logger)
            guard report.countsMatch else {
                return (1, report.text + "\ncounts differ: the destination must be empty, or hold only what earlier runs copied")
            }
            return (0, report.text)
        } catch let error as ConfigurationError {
            return (2, error.description)
        } catch {
            return (1, "\(error)")
        }
    }
}
