import BrokerCore
import BrokerCrypto
import BrokerFakeProviders
import Foundation

/// `token-broker demo`: the broker on embedded defaults beside a built-in demo OAuth 2.0 provider, for a first
/// look on one machine with nothing to register anywhere.
///
/// The provider is the fake the tests use (``FakeOAuth2Provider``): a real OAuth 2.0 server
/// on its own 127.0.0.1 port, with PKCE, a consent page labelled "not a real account", and
/// short-lived access tokens with rotating refresh tokens, so a refresh can be watched. Only
/// this command makes it; `serve` never does, and its test-only knobs stay off. Accounts, the
/// keys and the providers file live in a new temporary directory removed at exit: the provider
/// forgets its tokens when it stops, so accounts kept for a later run could never be refreshed.
public final class Demo: Sendable {
    /// The demo's own settings, read from the environment in one place.
    public struct Settings: Sendable, Equatable {
        /// `BROKER_DEMO_PORT`: the demo provider's port; nil takes the first free one after the broker's.
        public var providerPort: Int?
        /// `BROKER_DEMO_TOKEN_LIFETIME`: seconds a demo access token lives.
        public var tokenLifetime: Int

        /// Reads the settings; a bad value names its variable.
        public static func from(environment: [String: String]) throws(ConfigurationError) -> Settings {
            let read = EnvironmentReader(environment)
            let port = read.raw("BROKER_DEMO_PORT") == nil ? nil : try read.integer("BROKER_DEMO_PORT", default: 0, range: 1...65535)
            return Settings(
                providerPort: port,
                tokenLifetime: try read.integer("BROKER_DEMO_TOKEN_LIFETIME", default: 120, range: 2...86_400))
        }
    }

    /// The provider's name in the broker: the connect page shows "Connect Demo".
    public static let providerName = "demo"
    /// The one user of the demo provider.
    public static let userID = "demo-user"

    /// What the broker runs with.
    public let configuration: BrokerConfiguration
    /// The demo provider, listening.
    public let provider: FakeOAuth2Provider
    /// The API key made for this run.
    public let apiKey: String
    /// The temporary directory holding the data, removed by ``cleanUp()``.
    public let directory: String
    /// The demo's settings.
    public let settings: Settings

    private init(
        configuration: BrokerConfiguration, provider: FakeOAuth2Provider, apiKey: String, directory: String,
        settings: Settings
    ) {
        self.configuration = configuration
        self.provider = provider
        self.apiKey = apiKey
        self.directory = directory
        self.settings = settings
    }

    /// Reads the environment, starts the demo provider and makes the temporary directory; the broker is not started.
    ///
    /// The usual `BROKER_*` variables apply (port, host, logs, limits) except those that would
    /// point the demo at real data or real providers: `BROKER_DATA_DIR`, `BROKER_STORE`,
    /// `BROKER_PROVIDERS_FILE`, `BROKER_API_KEY` and `BROKER_PUBLIC_URL` are ignored. Unless
    /// set, the refresh margin and the background sweep are a quarter of the token lifetime.
    public static func prepare(environment: [String: String]) throws -> Demo {
        let settings = try Settings.from(environment: environment)
        var environment = environment
        for ignored in ["BROKER_DATA_DIR", "BROKER_STORE", "BROKER_PROVIDERS_FILE", "BROKER_API_KEY", "BROKER_PUBLIC_URL"] {
            environment[ignored] = nil
        }
        let port = try BrokerConfiguration.from(environment: environment, readingProviders: false).server.port
        guard port != 0 else {
            throw ConfigurationError(variable: "BROKER_PORT", message: "demo needs a fixed port: its provider sends the browser back to it")
        }
        let publicURL = "http://127.0.0.1:\(port)"
        let secret = SecureRandom.token(byteCount: 24)
        let provider = try startProvider(
            settings: settings, brokerPort: port, clientSecret: secret,
            redirectURI: publicURL + "/callback")
        let directory: String
        do {
            directory = try Self.makeDirectory()
        } catch {
            Task { await provider.stop() }
            throw StartupError(message: "cannot create a temporary directory for the demo: \(error)")
        }
        let providers = directory + "/providers.json"
        let entry = provider.providerEntry(
            name: providerName, secretVariable: "DEMO_CLIENT_SECRET",
            extra: "\"scopes\": [\"profile\"], \"display_name\": \"Demo\"")
        guard
            FileManager.default.createFile(
                atPath: providers, contents: Data("{\"providers\": {\(entry)}}\n".utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            Task { await provider.stop() }
            throw StartupError(message: "cannot write \(providers)")
        }
        let read = EnvironmentReader(environment)
        environment["BROKER_PROVIDERS_FILE"] = providers
        // The provider's client secret reaches the providers file as ${DEMO_CLIENT_SECRET}, never in the file.
        environment["DEMO_CLIENT_SECRET"] = secret
        // A key for this run only, like everything else of it (none is written beside the data).
        if read.raw(EncryptionKeyring.environmentVariable) == nil {
            environment[EncryptionKeyring.environmentVariable] = Base64.encode(SecureRandom.bytes(32))
        }
        var c: BrokerConfiguration
        do {
            c = try BrokerConfiguration.from(environment: environment)
        } catch {
            Task { await provider.stop() }
            throw error
        }
        let apiKey = SecureRandom.token(byteCount: 24)
        c.dataDirectory = directory + "/data"
        c.apiKey = Secret(apiKey)
        c.publicURL = publicURL
        let quarter = Double(settings.tokenLifetime) / 4
        if read.raw("BROKER_REFRESH_MARGIN") == nil { c.refreshMargin = quarter }
        if read.raw("BROKER_REFRESH_INTERVAL") == nil { c.refreshInterval = min(60, quarter) }
        return Demo(configuration: c, provider: provider, apiKey: apiKey, directory: directory, settings: settings)
    }

    /// Starts the provider on `BROKER_DEMO_PORT`, or on the first free port of the twenty after the broker's.
    private static func startProvider(
        settings: Settings, brokerPort: Int, clientSecret: String,
        redirectURI: String
    ) throws -> FakeOAuth2Provider {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: clientSecret, clientID: "token-broker-demo")
        configuration.redirectURIs = [redirectURI]
        configuration.consent = .page(providerName: "Demo provider")
        configuration.pkce = .required
        configuration.names = FakeOAuth2Provider.TokenNames(
            code: "demo-code-", access: "demo-access-", refresh: "demo-refresh-",
            random: true)
        configuration.login = nil
        configuration.displayName = "Demo user"
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed(userID)
        behaviour.accessTokenLifetime = settings.tokenLifetime
        behaviour.refreshedTokenLifetime = settings.tokenLifetime
        let candidates =
            settings.providerPort.map { [$0] }
            ?? (1...20).map { brokerPort + $0 }.filter { $0 <= 65535 } + [0]
        var lastError: (any Error)?
        for port in candidates {
            let provider = FakeOAuth2Provider(configuration, behaviour: behaviour, host: "127.0.0.1", port: port)
            do {
                try provider.start()
                return provider
            } catch {
                lastError = error
            }
        }
        if settings.providerPort != nil {
            throw ConfigurationError(variable: "BROKER_DEMO_PORT", message: "cannot listen on it: \(lastError.map { "\($0)" } ?? "")")
        }
        throw StartupError(message: "cannot start the demo provider: \(lastError.map { "\($0)" } ?? "")")
    }

    /// A new directory `token-broker-demo.XXXXXX` under the system temporary directory, mode 0700.
    private static func makeDirectory() throws -> String {
        let base = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((base + "/token-broker-demo.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return String(cString: created)
    }

    /// What the demo prints once at start: where to go, the API key, how to read the token.
    public var banner: String {
        let base = configuration.publicURL
        let read = "curl -s -H 'Authorization: Bearer \(apiKey)' '\(base)/account?provider=\(Self.providerName)&uid=\(Self.userID)'"
        return """

            token-broker demo: the broker with a built-in demo provider. Nothing here is a real account.

              1. Open \(base)/ and click "Connect Demo"; approve on the demo provider's page.
              2. Read the token (the API key below was made for this run and is shown only here):

                 \(read)

              3. Demo access tokens live \(settings.tokenLifetime) s. Read again after that: the broker has refreshed it.

              API key        \(apiKey)
              demo provider  \(provider.baseURL) (not a real account)
              data           \(directory) (removed when the demo stops)

            Stop with Ctrl-C.

            """
    }

    /// Stops the provider and removes the temporary directory.
    public func cleanUp() async {
        await provider.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
