import BrokerCrypto
import Foundation
import Testing

@testable import BrokerCore

/// Entered credentials (api_key, basic, bearer) in the core: declared in the providers file, checked field by field,
/// stored in the account's sealed `access_token` without changing the record format, and placed on calls.
struct CredentialAccountTests {
    // MARK: Records

    /// The key `token-broker demo` of main at 275436f ran with (`BROKER_ENCRYPTION_KEY`), and the sealed record it wrote
    /// for the demo account, as the file store's journal held it. Records written before entered credentials existed
    /// must read unchanged.
    static let mainKey = "X8SV/C8oaquB1lhHPa7nWzdtGU47gb9vqMPVEP2j5Cc="
    static let mainRecord = #"""
        {"access_token":{"ct":"M5x8pj54fzJISPxUnBhIwtK6tLFRjCGLN2yTs6Ex2SoESCACNc2wM-Fas6rSah-hZ2Qs6_XI","kid":"edfd4824","nonce":"F3TYwLyz2mntcHlt"},"created_at":"2026-12-06T21:57:55.679Z","encryption":"chacha20-poly1305","expires_at":"2026-12-06T21:59:55.679Z","extras":"{\"scope\":\"profile\"}","id":"demo:demo-user","issued_at":"2026-12-06T21:57:55.679Z","provider":"demo","refresh_token":{"ct":"ysFGmW4ZVNQzQBVYDmN83uqdg4kCL3HndG0nkQSPgzNKxhjjFjs9XjHGPcVMiptooX_ZN2Z-QA","kid":"edfd4824","nonce":"AIw2tl5UECaqE8S5"},"scope":"profile","screen_name":"Demo user","status":"active","token_type":"bearer","uid":"demo-user","updated_at":"2026-12-06T21:57:55.679Z","version":1}
        """#

    @Test func aSealedRecordWrittenByTheEarlierVersionStillReads() throws {
        let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.mainKey))
        let account = try codec.decode(Array(Self.mainRecord.utf8), path: "fixture")
        #expect(account.id == "demo:demo-user")
        #expect(account.accessToken.value == "demo-access-3-1b8cbb4149ec3b3c297ce509")
        #expect(account.refreshToken != nil && account.tokenType == "bearer" && account.screenName == "Demo user")
        #expect(CredentialValues(stored: account.accessToken) == nil, "an OAuth token is not read as entered fields")
        // Re-sealed by this version, it reads back the same.
        #expect(try codec.decode(try codec.encode(account), path: "again") == account)
    }

    @Test func anEnteredCredentialIsSealedInAccessTokenAndReadsBack() throws {
        let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.mainKey))
        let values = CredentialValues([("username", Secret("ada")), ("password", Secret("PASS-SENTINEL \"q\" é"))])
        let account = Account(
            provider: "basicp", uid: "ada", accessToken: values.stored, tokenType: "basic", createdAt: Date(timeIntervalSince1970: 1),
            updatedAt: Date(timeIntervalSince1970: 2))
        let bytes = try codec.encode(account)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("PASS-SENTINEL"))
        let read = try codec.decode(bytes, path: "x")
        #expect(read == account)
        #expect(CredentialValues(stored: read.accessToken) == values)
        #expect(!"\(values)".contains("PASS") && !"\(read)".contains("PASS"))
        let plain = try PlainJSONAccountCodec().decode(try PlainJSONAccountCodec().encode(account), path: "p")
        #expect(CredentialValues(stored: plain.accessToken) == values)
    }

    // MARK: Providers file

    static func provider(_ entry: String) throws -> ProviderConfiguration {
        try ProvidersFile.configurations(from: Array("{\"providers\": {\"p\": \(entry)}}".utf8), environment: [:])[0]
    }

    static func problem(_ entry: String) -> String? {
        do {
            _ = try provider(entry)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func eachKindHasItsDefaults() throws {
        let key = try Self.provider(#"{"auth": "api_key"}"#)
        #expect(key.kind == .apiKey && key.grants.isEmpty && key.isConfigured && !key.offersSignIn)
        #expect(key.credentials?.fields.map(\.name) == ["api_key"])
        #expect(key.credentials?.placement == .header(name: "Authorization", format: "Bearer {api_key}"))
        #expect(
            try Self.provider(#"{"kind": "bearer"}"#).credentials?.placement == .header(name: "Authorization", format: "Bearer {token}"))
        let basic = try Self.provider(#"{"auth": "basic"}"#)
        #expect(basic.credentials?.fields.map(\.name) == ["username", "password"] && basic.credentials?.placement == .basic)
        #expect(
            try Self.provider(#"{"auth": "api_key", "credential_header": "X-Api-Key"}"#).credentials?.placement
                == .header(name: "X-Api-Key", format: "{api_key}"))
        #expect(
            try Self.provider(#"{"auth": "api_key", "credential_query_param": "key"}"#).credentials?.placement
                == .query(name: "key", format: "{api_key}"))
    }

    @Test func declaredFieldsPlacementAndVerificationAreRead() throws {
        let p = try Self.provider(
            #"""
            {"auth": "api_key", "api_base_url": "https://api.example.com/v1",
             "fields": [{"name": "key", "description": "Secret key", "pattern": "sk_[a-z0-9]+", "max_length": 64}],
             "credential_header": "Authorization", "credential_format": "Token {key}",
             "verify": {"method": "GET", "path": "/me", "valid_statuses": [200], "user_id_field": "user.id"}}
            """#)
        let scheme = try #require(p.credentials)
        #expect(scheme.fields == [CredentialScheme.Field(name: "key", description: "Secret key", pattern: "sk_[a-z0-9]+", maxLength: 64)])
        #expect(scheme.placement == .header(name: "Authorization", format: "Token {key}"))
        #expect(scheme.verification == CredentialScheme.Verification(path: "/me", userIDField: ProviderJSONPath("user.id")))
        #expect(scheme.check(["key": "sk_abc"]).isSuccess)
        #expect(scheme.check(["key": "pk_abc"]) == .failure(.invalidValue("key", "does not have the form the provider expects")))
        #expect(
            scheme.check(["key": "sk_" + String(repeating: "a", count: 62)]) == .failure(.invalidValue("key", "is longer than 64 bytes")))
        #expect(scheme.check(["key": "sk_a", "extra": "x"]) == .failure(.unknownField("extra", expected: ["key"])))
        #expect(scheme.check([:]) == .failure(.missingField("key")))
        #expect(scheme.check(["key": "sk_a\u{85}"]) == .failure(.invalidValue("key", "contains a control character")))
    }

    @Test(arguments: [
        (#"{"auth": "api_key", "kind": "api_key"}"#, "auth"),
        (#"{"auth": "apikey"}"#, "unknown kind"),
        (#"{"auth": "api_key", "credential_format": "Token {apikey}"}"#, "credential_format"),
        (#"{"auth": "api_key", "credential_format": "Token"}"#, "credential_format"),
        (#"{"auth": "api_key", "credential_header": "Cookie"}"#, "credential_header"),
        (#"{"auth": "api_key", "credential_header": "Broker-Account"}"#, "credential_header"),
        (#"{"auth": "api_key", "credential_header": "X", "credential_query_param": "k"}"#, "credential_query_param"),
        (#"{"auth": "basic", "credential_header": "X-Key"}"#, "credential_header"),
        (#"{"auth": "basic", "fields": [{"name": "user"}, {"name": "password"}]}"#, "fields"),
        (#"{"auth": "api_key", "fields": [{"name": "Key"}]}"#, "fields"),
        (#"{"auth": "api_key", "fields": [{"name": "k", "pattern": "("}]}"#, "fields"),
        (#"{"auth": "api_key", "fields": [{"name": "k", "max_length": 5000}]}"#, "fields"),
        (#"{"auth": "api_key", "credential_extra_headers": {"X-App": "{app_key}"}}"#, "credential_extra_headers"),
        (#"{"auth": "api_key", "credential_extra_headers": {"Authorization": "{api_key}"}}"#, "credential_extra_headers"),
        (
            #"{"auth": "api_key", "credential_header": "X-Key", "credential_extra_headers": {"x-key": "{api_key}"}}"#,
            "credential_extra_headers"
        ),
        (#"{"auth": "api_key", "credential_extra_headers": {"Cookie": "{api_key}"}}"#, "credential_extra_headers"),
        (#"{"auth": "api_key", "credential_extra_headers": {"X-A": "fixed"}}"#, "credential_extra_headers"),
        (#"{"auth": "api_key", "credential_extra_headers": {}}"#, "credential_extra_headers"),
        (#"{"kind": "oauth2", "credential_extra_headers": {"X-A": "{api_key}"}}"#, "credential_extra_headers"),
        (#"{"auth": "api_key", "verify": {"path": "/me"}}"#, "verify"),
        (#"{"auth": "api_key", "api_base_url": "https://a.example", "verify": {"path": "me"}}"#, "verify"),
        (#"{"auth": "api_key", "api_base_url": "https://a.example", "verify": {"path": "/me", "valid_statuses": [401]}}"#, "verify"),
        (#"{"auth": "api_key", "api_base_url": "https://a.example", "verify": {"path": "/me", "method": "DELETE"}}"#, "verify"),
        (
            #"{"kind": "oauth2", "authorize_url": "https://a.example/a", "token_url": "https://a.example/t", "user_url": "https://a.example/u", "client_id": "c", "client_secret": "s", "verify": {"path": "/me"}}"#,
            "verify"
        ),
    ])
    func aBadDeclarationStopsStartUpNamingTheKey(entry: String, key: String) {
        let problem = Self.problem(entry)
        #expect(problem?.contains(key) == true, "\(entry): \(problem ?? "accepted")")
    }

    // MARK: Placement

    static func outbound(_ placement: CredentialScheme.Placement, _ values: CredentialValues, query: String? = "a=1") throws
        -> ProxyOutbound.Request
    {
        var credential = ProxyCredential(accessToken: values.stored)
        credential.entered = values
        return try ProxyOutbound.make(
            method: "GET", base: try ProxyTarget.Base("https://api.example.com/v1"), path: "/x", query: query,
            callerHeaders: [("Authorization", "Bearer caller"), ("X-Api-Key", "caller")], credential: credential,
            placement: ProxyCredentialPlacement(token: .entered(placement)))
    }

    @Test func eachPlacementWritesTheCredentialAndDropsTheCallers() throws {
        let key = CredentialValues([("api_key", Secret("k 1"))])
        let header = try Self.outbound(.header(name: "X-Api-Key", format: "{api_key}"), key)
        #expect(header.headers.filter { $0.name.lowercased() == "x-api-key" }.map(\.value) == ["k 1"])
        #expect(!header.headers.contains { $0.name == "Authorization" })
        let query = try Self.outbound(.query(name: "api_key", format: "{api_key}"), key)
        #expect(query.url == "https://api.example.com/v1/x?a=1&api_key=k%201")
        let pair = CredentialValues([("username", Secret("ada")), ("password", Secret("p:w"))])
        let basic = try Self.outbound(.basic, pair)
        #expect(basic.headers.last.map { $0.name + ": " + $0.value } == "Authorization: Basic " + Base64.encode(Array("ada:p:w".utf8)))
        // The caller may not name the parameter that carries the key.
        #expect(throws: ProxyOutbound.Failure.self) {
            try Self.outbound(.query(name: "api_key", format: "{api_key}"), key, query: "api_key=mine")
        }
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
}
