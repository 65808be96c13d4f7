import BrokerCore
import BrokerPostgres

extension BrokerConfiguration {
    /// `BROKER_STORE=postgres://…` with `BROKER_STORE_PASSWORD_FILE` and `BROKER_POSTGRES_ALLOW_MD5`; errors name the
    /// variable, never the password.
    static func postgresStore(_ url: String, _ read: EnvironmentReader) throws(ConfigurationError) -> PostgresConfiguration {
        var configuration: PostgresConfiguration
        do {
            configuration = try PostgresConfiguration.parse(url)
        } catch {
            throw ConfigurationError(variable: "BROKER_STORE", message: "is not a usable PostgreSQL URL: \(error)")
        }
        if let path = read.raw("BROKER_STORE_PASSWORD_FILE") {
            if configuration.password != nil {
                throw ConfigurationError(
                    variable: "BROKER_STORE_PASSWORD_FILE",
                    message: "is set, and BROKER_STORE carries a password: give it one way, not both")
            }
            configuration.password = Secret(try EnvironmentReader.readSecretFile(path, variable: "BROKER_STORE_PASSWORD_FILE"))
        }
        configuration.allowMD5 = try read.boolean("BROKER_POSTGRES_ALLOW_MD5", default: false)
        // Checks what the client cannot honour (an sslmode that needs TLS) now, not at the first statement.
        _ = try PostgresClient.opening(configuration)
        return configuration
    }

    /// `BROKER_STORE` as it may be logged: the Redis location, `postgres://` with its hosts and database only, or `files`.
    var storeDescription: String {
        if let redisStore { return "\(redisStore)" }
        if let postgresStore {
            return "postgres://" + postgresStore.endpoints.map(\.description).joined(separator: ",") + "/" + postgresStore.database
        }
        return "files"
    }
}

extension PostgresClient {
    /// A client for `configuration`; what it cannot honour is a ``ConfigurationError`` on `variable` (never naming the
    /// password).
    static func opening(
        _ configuration: PostgresConfiguration, variable: String = "BROKER_STORE"
    ) throws(ConfigurationError) -> PostgresClient {
        do {
            return try PostgresClient(configuration: configuration)
        } catch {
            throw ConfigurationError(variable: variable, message: "\(error)")
        }
    }
}
