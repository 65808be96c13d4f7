// fake-provider: one of the fake providers of BrokerFakeProviders as a process, for scripts and
// browser tests that drive a real token-broker binary. Not part of the service.
//
//   fake-provider --kind oauth2|oidc|weibo|twitter|tmdb|credentials [--host H] [--port N] [--client-id ID] [--client-secret S]
//                 [--consent auto|page] [--pkce required|optional|ignored|forbidden] [--users fixed|counting]
//                 [--token-lifetime SECONDS] [--control] [--client-credentials] [--providers-file PATH]
//                 [--secret-variable NAME]
//
// Prints the bound port on the first line of stdout once it listens, then serves until SIGTERM or SIGINT.
// --client-secret is the consumer secret for twitter and the API key for tmdb. --control serves
// GET /_fake/stats and POST /_fake/control (OAuth 2.0 kinds). --providers-file writes a providers
// file pointing the broker at the fake (the secret as ${NAME}, NAME from --secret-variable) before
// the port is printed. --client-credentials (oauth2) grants app tokens (RFC 6749 §4.4): the providers
// file's `acme` then has both grants, and `acme-app` is a machine-to-machine entry for the same fake.
// --kind oidc is the OAuth 2.0 fake as an OpenID Connect provider: a discovery
// document at /.well-known/openid-configuration, ID tokens, and a providers file naming only its issuer.
// --kind credentials is an API taking entered credentials (FakeCredentialProvider): --client-secret is the API key and
// bearer token it accepts, and the basic pair is `ada` with it as password; its providers file has keyhdr, keyqry,
// basicp and bearerp.
import BrokerFakeProviders
import Dispatch
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("fake-provider: \(message)\n".utf8))
    exit(2)
}

var options: [String: String] = [:]
var control = false
var clientCredentials = false
var arguments = Array(CommandLine.arguments.dropFirst())
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--control":
        control = true
    case "--client-credentials":
        clientCredentials = true
    case "--kind", "--host", "--port", "--client-id", "--client-secret", "--consent", "--pkce", "--users",
        "--token-lifetime", "--providers-file", "--secret-variable":
        guard let value = arguments.first else { fail("\(argument) needs a value") }
        arguments.removeFirst()
        options[String(argument.dropFirst(2))] = value
    case "-h", "--help":
        print(
            "usage: fake-provider --kind oauth2|oidc|weibo|twitter|tmdb|credentials [--host H] [--port N] [--client-id ID] [--client-secret S] "
                + "[--consent auto|page] [--pkce required|optional|ignored|forbidden] [--users fixed|counting] [--token-lifetime SECONDS] "
                + "[--control] [--client-credentials] [--providers-file PATH] [--secret-variable NAME]")
        exit(0)
    default:
        fail("unknown argument \(argument)")
    }
}

let host = options["host"] ?? "127.0.0.1"
guard let port = Int(options["port"] ?? "0"), (0...65535).contains(port) else { fail("--port must be 0…65535") }
let secret = options["client-secret"] ?? "FAKE-CLIENT-SECRET-SENTINEL-0123456789"

/// Starts the fake; returns its port and its providers file.
@MainActor func start() throws -> (port: Int, providers: String, keepAlive: any Sendable) {
    switch options["kind"] {
    case "oauth2", "oidc", "weibo":
        let dialect: OAuth2Dialect = options["kind"] == "weibo" ? .weibo : .rfc6749
        var configuration = FakeOAuth2Provider.Configuration(
            dialect: dialect, clientID: options["client-id"] ?? (dialect == .weibo ? "1234567890" : "acme-client-id"),
            clientSecret: secret)
        configuration.controlRoutes = control
        configuration.clientCredentials = clientCredentials
        configuration.openID = options["kind"] == "oidc"
        switch options["consent"] ?? "auto" {
        case "auto": configuration.consent = .automatic
        case "page": configuration.consent = .page(providerName: dialect == .weibo ? "Fake Weibo" : "Fake provider")
        default: fail("--consent must be auto or page")
        }
        switch options["pkce"] {
        case nil: break
        case "required": configuration.pkce = .required
        case "optional": configuration.pkce = .optional
        case "ignored": configuration.pkce = .ignored
        case "forbidden": configuration.pkce = .forbidden
        default: fail("--pkce must be required, optional, ignored or forbidden")
        }
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: dialect)
        switch options["users"] ?? "fixed" {
        case "fixed": break
        case "counting": behaviour.users = .counting(from: 5_000_000_001)
        default: fail("--users must be fixed or counting")
        }
        if let text = options["token-lifetime"] {
            guard let seconds = Int(text), seconds > 0 else { fail("--token-lifetime must be a positive number of seconds") }
            behaviour.accessTokenLifetime = seconds
            behaviour.refreshedTokenLifetime = seconds
        }
        let provider = FakeOAuth2Provider(configuration, behaviour: behaviour, host: host, port: port)
        try provider.start()
        let variable = options["secret-variable"] ?? (dialect == .weibo ? "FAKE_WEIBO_SECRET" : "FAKE_ACME_SECRET")
        if configuration.openID {
            return (provider.port, "{\"providers\": {\(provider.oidcProviderEntry(secretVariable: variable))}}", provider)
        }
        guard clientCredentials else {
            return (provider.port, provider.providersFile(secretVariable: options["secret-variable"]), provider)
        }
        let entries = [
            provider.providerEntry(secretVariable: variable, extra: "\"grant\": [\"authorization_code\", \"client_credentials\"]"),
            provider.appTokenEntry(secretVariable: variable),
        ]
        return (provider.port, "{\"providers\": {" + entries.joined(separator: ", ") + "}}", provider)
    case "twitter":
        let fake = FakeTwitterProvider(consumerSecret: secret, host: host, port: port)
        try fake.start()
        return (fake.port, "{\"providers\": {\(fake.providerEntry())}}", fake)
    case "tmdb":
        let fake = FakeTMDBProvider(apiKey: secret, host: host, port: port)
        try fake.start()
        return (fake.port, "{\"providers\": {\(fake.providerEntry)}}", fake)
    case "credentials":
        let fake = FakeCredentialProvider(apiKey: secret, token: secret, username: "ada", password: secret, host: host, port: port)
        try fake.start()
        return (fake.port, fake.allProvidersFile, fake)
    case nil:
        fail("--kind is required (oauth2, oidc, weibo, twitter, tmdb or credentials)")
    case let other?:
        fail("unknown kind \(other)")
    }
}

let running: (port: Int, providers: String, keepAlive: any Sendable)
do {
    running = try start()
} catch {
    fail("cannot listen on \(host):\(port): \(error)")
}
if let path = options["providers-file"] {
    // Written whole before the port is printed, so a script that waited for the port can read it.
    do {
        try Data(running.providers.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
        fail("cannot write \(path): \(error)")
    }
}
FileHandle.standardOutput.write(Data("\(running.port)\n".utf8))

let signals = [SIGTERM, SIGINT].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
    source.setEventHandler { exit(0) }
    source.activate()
    return source
}
dispatchMain()
