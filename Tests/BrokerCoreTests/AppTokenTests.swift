import BrokerCrypto
import Foundation
import Testing

@testable import BrokerCore

/// The pieces of app tokens that need no provider: scope normalization, the stored format, the providers-file `grant`.
struct AppTokenTests {
    static let key = EncryptionKey(id: "k1", bytes: (0..<32).map { UInt8($0) })

    @Test func scopesAreSplitOnSpacesDeduplicatedAndSortedByTheirBytes() throws {
        #expect(try AppTokenScope.tokens("write read  read") == ["read", "write"])
        #expect(try AppTokenScope.tokens("") == [])
        #expect(try AppTokenScope.tokens("https://graph.example/.default api:x") == ["api:x", "https://graph.example/.default"])
        for bad in ["a\"b", "a\\b", "é", "a\tb", "a\u{7F}"] {
            #expect(throws: BrokerError.self) { try AppTokenScope.tokens(bad) }
        }
        #expect(throws: BrokerError.self) { try AppTokenScope.tokens(String(repeating: "a", count: 1025)) }
        #expect(throws: BrokerError.self) { try AppTokenScope.tokens((0..<65).map { "s\($0)" }.joined(separator: " ")) }
    }

    @Test func aStoredTokenIsSealedAndOpensOnlyUnderItsOwnKey() throws {
        let codec = EncryptedAccountCodec(keyring: EncryptionKeyring(keys: [Self.key], source: "test"))
        let token = AppToken(
            provider: "acme", requestedScope: "read", accessToken: Secret("APP-TOKEN-SENTINEL-1"), tokenType: "Bearer", scope: nil,
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000.25), expiresAt: Date(timeIntervalSince1970: 1_800_003_600.25))
        let bytes = AppTokenCodec.encode(token, sealer: codec)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("APP-TOKEN-SENTINEL"))
        #expect(try AppTokenCodec.decode(bytes, key: "acme|read", path: "test", sealer: codec) == token)
        // Moved to another key, it is refused rather than handed out for the wrong scope.
        let moved = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"read\"", with: "\"write\"")
        #expect(throws: StoreError.self) {
            try AppTokenCodec.decode(Array(moved.utf8), key: "acme|write", path: "test", sealer: codec)
        }
        #expect(throws: StoreError.self) { try AppTokenCodec.decode(bytes, key: "acme|write", path: "test", sealer: codec) }
        #expect(throws: StoreError.self) { try AppTokenCodec.decode(Array("{}".utf8), key: "acme|read", path: "test", sealer: codec) }
        // Without a key the token is kept readable, and read back.
        let plain = AppTokenCodec.encode(token, sealer: nil)
        #expect(try AppTokenCodec.decode(plain, key: "acme|read", path: "test", sealer: nil) == token)
    }

    static func configuration(_ entry: String) throws(ProviderConfigurationError) -> ProviderConfiguration {
        try ProvidersFile.configurations(from: Array("{\"providers\": {\"m2m\": \(entry)}}".utf8), environment: [:])[0]
    }

    @Test func aMachineToMachineEntryNeedsOnlyTheTokenEndpointAndTheClient() throws {
        let m2m = try Self.configuration(
            #"{"kind":"oauth2","client_id":"id","client_secret":"s","token_url":"https://p.example/token","grant":"client_credentials"}"#)
        #expect(m2m.grants == .clientCredentials)
        #expect(m2m.isConfigured)
        #expect(!m2m.offersSignIn)
        // Incomplete, it is refused naming the first setting the grant needs; no authorize or user URL is asked for.
        #expect(Self.error(#"{"kind":"oauth2","client_id":"id","grant":"client_credentials"}"#)?.key == "client_secret")
        var lacking = m2m
        lacking.clientSecret = nil
        lacking.tokenURL = nil
        #expect(lacking.missingSettings == ["client_secret", "token_url"])
        let both = try Self.configuration(
            #"{"kind":"oauth2","client_id":"id","client_secret":"s","token_url":"https://p.example/token","#
                + #""authorize_url":"https://p.example/a","user_url":"https://p.example/u","grant":["client_credentials","authorization_code"]}"#
        )
        #expect(both.grants == [.authorizationCode, .clientCredentials])
        #expect(both.offersSignIn)
    }

    @Test func aBadGrantIsRefusedNamingTheKey() {
        for entry in [
            #"{"kind":"oauth2","grant":"password"}"#, #"{"kind":"oauth2","grant":[]}"#, #"{"kind":"oauth2","grant":1}"#,
            #"{"kind":"tmdb","api_key":"k","grant":"client_credentials"}"#,
        ] {
            #expect(Self.error(entry)?.key == "grant")
        }
    }

    static func error(_ entry: String) -> ProviderConfigurationError? {
        do {
            _ = try configuration(entry)
            return nil
        } catch {
            return error
        }
    }
}
