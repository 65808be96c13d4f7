import BrokerCrypto
import Foundation
import Testing

@testable import BrokerCore

/// The API-key and basic-auth presets (`ProviderPresets+Credentials.swift`): each well formed (fields, placement,
/// verification, an `https` API base), each cited in docs/providers.md's table, none offered until the providers file
/// names it, and each placed on a call as declared.
@Suite struct CredentialPresetCatalogueTests {
    static let catalogue = ProviderPresets.credentialCatalogue

    /// The preset names in the rows of docs/providers.md's "The API-key catalogue" table, each with its source links.
    static func documentedRows() throws -> [String: [String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/providers.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## The API-key catalogue\n").dropFirst().first)
        var rows: [String: [String]] = [:]
        for line in section.split(separator: "\n") {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let links = line.components(separatedBy: "](").dropFirst().map { String($0.prefix { $0 != ")" }) }
            rows[name] = links
        }
        return rows
    }

    @Test func thereAreAtLeastTwentyEachWellFormed() throws {
        #expect(Self.catalogue.count >= 20)
        let names = Self.catalogue.map(\.name)
        #expect(Set(names).count == names.count && names == names.sorted())
        // No clash with the presets every broker loads.
        #expect(Set(names).isDisjoint(with: ProviderPresets.names))
        for preset in Self.catalogue {
            let scheme = try #require(preset.credentials, "\(preset.name)")
            #expect(preset.kind.holdsEnteredCredentials && preset.grants.isEmpty && preset.isConfigured, "\(preset.name)")
            #expect(preset.displayName?.isEmpty == false, "\(preset.name)")
            // A per-account setting in the base is checked with a sample value, as the providers file's URLs are.
            let settingNames = preset.accountSettings.map(\.name)
            let sampleBase = settingNames.reduce(preset.apiBaseURL ?? "") { $0.replacingOccurrences(of: "{\($1)}", with: "acme") }
            let base = try #require(URLComponents(string: sampleBase), "\(preset.name)")
            #expect(base.scheme == "https" && base.host?.isEmpty == false && base.query == nil, "\(preset.name)")
            #expect((try? ProxyTarget.Base(sampleBase)) != nil, "\(preset.name)")
            for setting in preset.accountSettings {
                #expect(setting.name.range(of: "^[a-z][a-z0-9_]{0,63}$", options: .regularExpression) != nil, "\(preset.name)")
                #expect(setting.problem(with: "acme", inHost: true) == nil, "\(preset.name)")
                #expect(setting.problem(with: "acme.evil.com", inHost: preset.settingsInHost.contains(setting.name)) != nil)
                #expect(
                    preset.apiBaseURL?.contains("{\(setting.name)}") == true || scheme.places("{\(setting.name)}"), "\(preset.name)")
            }
            // Fields: named as the providers file requires, described, patterns that compile.
            #expect(!scheme.fields.isEmpty, "\(preset.name)")
            for field in scheme.fields {
                #expect(field.name.range(of: "^[a-z][a-z0-9_]{0,63}$", options: .regularExpression) != nil, "\(preset.name)")
                #expect(!field.description.isEmpty && field.maxLength <= CredentialScheme.maximumValueBytes, "\(preset.name)")
                if let pattern = field.pattern { #expect((try? NSRegularExpression(pattern: pattern)) != nil, "\(preset.name)") }
            }
            // Placement: every placeholder names a field or a setting, and every field is placed somewhere.
            var placed: [String] = []
            switch scheme.placement {
            case .basic:
                #expect(preset.kind == .basic && scheme.fields.map(\.name) == ["username", "password"], "\(preset.name)")
                placed = ["username", "password"]
            case .header(let name, let format), .query(let name, let format):
                #expect(ProxyHeaders.isToken(name) && !name.lowercased().hasPrefix("broker-"), "\(preset.name)")
                placed = CredentialScheme.placeholders(in: format)
            }
            for extra in scheme.additionalHeaders {
                #expect(ProxyHeaders.isToken(extra.name), "\(preset.name)")
                placed += CredentialScheme.placeholders(in: extra.format)
            }
            #expect(Set(placed).subtracting(settingNames) == Set(scheme.fields.map(\.name)), "\(preset.name): placed \(placed)")
            // Verification: a path on the base, a method the file allows, statuses that mean valid.
            let verify = try #require(scheme.verification, "\(preset.name)")
            #expect(verify.path.hasPrefix("/") && !verify.path.contains(".."), "\(preset.name)")
            #expect(["GET", "POST", "HEAD"].contains(verify.method), "\(preset.name)")
            #expect(
                !verify.validStatuses.isEmpty && verify.validStatuses.allSatisfy { (200...399).contains($0) || $0 == 400 }, "\(preset.name)"
            )
        }
    }

    @Test func eachIsCitedInTheDocsTable() throws {
        let rows = try Self.documentedRows()
        for preset in Self.catalogue {
            let links = rows[preset.name] ?? []
            #expect(!links.isEmpty && links.allSatisfy { $0.hasPrefix("https://") }, "\(preset.name) has no source in docs/providers.md")
        }
        #expect(Set(rows.keys) == Set(Self.catalogue.map(\.name)), "the table and the catalogue differ")
    }

    /// A basic account is named by its user name, unless the preset fixes it: every Mailgun key's user name is `api`,
    /// so two Mailgun keys would otherwise land on one account, the second replacing the first.
    @Test func aFixedUserNameDoesNotNameTheAccount() {
        let mailgun = ProviderPresets.mailgun
        let first = CredentialValues([("username", Secret("api")), ("password", Secret("key-one-0123456789"))])
        let second = CredentialValues([("username", Secret("api")), ("password", Secret("key-two-0123456789"))])
        #expect(first.derivedUID(provider: mailgun).hasPrefix("key-"))
        #expect(first.derivedUID(provider: mailgun) != second.derivedUID(provider: mailgun))
        #expect(first.derivedUID(provider: mailgun) == first.derivedUID(provider: mailgun))
        let twilio = ProviderPresets.twilio
        let pair = CredentialValues([("username", Secret("AC0123456789abcdef0123456789abcdef")), ("password", Secret("token"))])
        #expect(pair.derivedUID(provider: twilio) == "AC0123456789abcdef0123456789abcdef")
    }

    /// The presets whose host is the customer's: each account's setting lands in the host (and Algolia's in a header),
    /// and Freshdesk's user name, which is the API key, is a secret that never names the account.
    @Test func theSettingsPresetsPlaceTheirSettings() throws {
        func outbound(_ preset: ProviderConfiguration, _ settings: [String: String], _ values: CredentialValues) throws
            -> ProxyOutbound.Request
        {
            let resolved = try preset.applyingSettings(settings).0
            var credential = ProxyCredential(accessToken: values.stored)
            credential.entered = values
            return try ProxyOutbound.make(
                method: "GET", base: try ProxyTarget.Base(resolved.apiBaseURL ?? ""), path: "/x", query: nil, callerHeaders: [],
                credential: credential, placement: ProxyCredentialPlacement(provider: resolved))
        }
        let algolia = try outbound(ProviderPresets.algolia, ["application_id": "LATENCY"], CredentialValues([("api_key", Secret("k1"))]))
        #expect(algolia.url == "https://LATENCY-dsn.algolia.net/x" || algolia.url == "https://latency-dsn.algolia.net/x", "\(algolia.url)")
        #expect(algolia.headers.contains { $0.name == "X-Algolia-API-Key" && $0.value == "k1" })
        #expect(algolia.headers.contains { $0.name == "X-Algolia-Application-Id" && $0.value == "LATENCY" })
        #expect(throws: BrokerError.self) { try ProviderPresets.algolia.applyingSettings(["application_id": "app.evil.com"]) }
        let pair = CredentialValues([("username", Secret("fd-key-123")), ("password", Secret("X"))])
        let freshdesk = try outbound(ProviderPresets.freshdesk, ["domain": "acme"], pair)
        #expect(freshdesk.url == "https://acme.freshdesk.com/api/v2/x")
        #expect(
            freshdesk.headers.contains { $0.name == "Authorization" && $0.value == "Basic " + Base64.encode(Array("fd-key-123:X".utf8)) })
        #expect(!pair.derivedUID(provider: ProviderPresets.freshdesk).contains("fd-key"))
        #expect(ProviderPresets.freshdesk.credentials?.fields.map(\.isSecret) == [true, false])
        let zendesk = ProviderPresets.zendeskToken
        let token = CredentialValues([("username", Secret("ann@example.com/token")), ("password", Secret("zd-token"))])
        #expect(try outbound(zendesk, ["subdomain": "acme"], token).url == "https://acme.zendesk.com/api/v2/x")
        if case .failure? = zendesk.credentials?.check(["username": "ann@example.com/token", "password": "t"]) {
            Issue.record("a Zendesk user name with /token was refused")
        }
        if case .success? = zendesk.credentials?.check(["username": "ann@example.com", "password": "t"]) {
            Issue.record("a Zendesk user name without /token was accepted")
        }
    }

    @Test func noneIsOfferedUntilTheProvidersFileNamesIt() throws {
        let plain = try ProviderRegistry.load(environment: [:], providersFile: nil)
        #expect(plain.provider(named: "openai") == nil)
        let file = #"{"providers": {"openai": {}, "twilio": {}, "stripe": {"verify": {"path": "/v1/account"}}}}"#
        let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        let openai = try #require(registry.provider(named: "openai"))
        #expect(openai.credentials == ProviderPresets.openai.credentials && openai.apiBaseURL == "https://api.openai.com/v1")
        #expect(registry.provider(named: "twilio")?.kind == .basic)
        // The file changes what it names, as for a custom provider.
        #expect(registry.provider(named: "stripe")?.credentials?.verification?.path == "/v1/account")
        #expect(registry.provider(named: "stripe")?.credentials?.fields == ProviderPresets.stripe.credentials?.fields)
    }

    @Test func aFileThatUsedACatalogueNameForAnotherKindKeepsLoading() throws {
        // Written before the catalogue existed: a custom OAuth 2.0 "sentry" and a bearer "stripe".
        let file = #"""
            {"providers": {
              "sentry": {"kind": "oauth2", "client_id": "id", "client_secret": "secret", "authorize_url": "https://sentry.io/oauth/authorize/",
                         "token_url": "https://sentry.io/oauth/token/", "user_url": "https://sentry.io/api/0/users/me/"},
              "stripe": {"auth": "bearer", "api_base_url": "https://api.stripe.com"}
            }}
            """#
        let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        let sentry = try #require(registry.provider(named: "sentry"))
        #expect(sentry.kind == .oauth2 && sentry.credentials == nil && sentry.offersSignIn)
        let stripe = try #require(registry.provider(named: "stripe"))
        #expect(stripe.kind == .bearer && stripe.credentials == CredentialScheme.defaults(for: .bearer))
    }

    @Test func theProvidersFileStatesAFurtherHeaderAsThePresetsDo() throws {
        let file = #"""
            {"providers": {"dd-eu": {"auth": "api_key", "api_base_url": "https://api.datadoghq.eu",
              "fields": [{"name": "api_key", "description": "API key"}, {"name": "application_key", "description": "Application key"}],
              "credential_header": "DD-API-KEY", "credential_extra_headers": {"DD-APPLICATION-KEY": "{application_key}"},
              "verify": {"path": "/api/v2/validate_keys"}}}}
            """#
        let registry = try ProviderRegistry.load(environment: [:], providersFile: Array(file.utf8))
        let scheme = try #require(registry.provider(named: "dd-eu")?.credentials)
        #expect(scheme.placement == ProviderPresets.datadog.credentials?.placement)
        #expect(scheme.additionalHeaders == ProviderPresets.datadog.credentials?.additionalHeaders)
    }

    @Test func datadogCarriesBothKeysAndAnthropicItsVersion() throws {
        func outbound(_ preset: ProviderConfiguration, _ values: CredentialValues) throws -> ProxyOutbound.Request {
            var credential = ProxyCredential(accessToken: values.stored)
            credential.entered = values
            return try ProxyOutbound.make(
                method: "GET", base: try ProxyTarget.Base(preset.apiBaseURL ?? ""), path: "/x", query: nil,
                callerHeaders: [("DD-APPLICATION-KEY", "caller's")], credential: credential,
                placement: ProxyCredentialPlacement(provider: preset))
        }
        let datadog = try outbound(
            ProviderPresets.datadog, CredentialValues([("api_key", Secret("dd-api")), ("application_key", Secret("dd-app"))]))
        #expect(datadog.headers.filter { $0.name == "DD-API-KEY" }.map(\.value) == ["dd-api"])
        #expect(datadog.headers.filter { $0.name.lowercased() == "dd-application-key" }.map(\.value) == ["dd-app"])
        let anthropic = try outbound(ProviderPresets.anthropic, CredentialValues([("api_key", Secret("sk-ant-1"))]))
        #expect(anthropic.headers.contains { $0.name == "x-api-key" && $0.value == "sk-ant-1" })
        #expect(anthropic.headers.contains { $0.name == "anthropic-version" && $0.value == "2023-06-01" })
        #expect(!anthropic.headers.contains { $0.name == "Authorization" })
        // A value that would split the header is refused, not sent.
        #expect(throws: ProxyOutbound.Failure.self) {
            try outbound(
                ProviderPresets.datadog, CredentialValues([("api_key", Secret("a")), ("application_key", Secret("b\r\nX: y"))]))
        }
    }
}
