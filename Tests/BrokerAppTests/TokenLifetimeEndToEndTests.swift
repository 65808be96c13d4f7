import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp
@testable import BrokerCore

/// Token lifetimes against an in-process OAuth 2.0 provider on an injected clock: margins that fit short-lived
/// tokens, answers without `expires_in`, refresh tokens that lapse, and the answer's other fields under `raw`.
@Suite(.scoped) struct TokenLifetimeEndToEndTests {
    static let clientSecret = "ACME-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]
    static let accountPath = "/account?id=acme:4242"
    static let notLongerLived = "refreshed token expires no later than the one it replaced"

    struct Setup {
        let provider: FakeOAuth2Provider
        let broker: BrokerHarness
        let clock: TestClock

        /// `GET /account` in process, and its JSON.
        func read() async throws -> [String: Any] {
            let response = await broker.respond(.GET, TokenLifetimeEndToEndTests.accountPath, headers: TokenLifetimeEndToEndTests.api)
            #expect(response.status.code == 200)
            return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        }

        /// The stored account.
        func stored() async throws -> Account {
            try #require(try await broker.broker.backgroundRefresher.service.list(provider: "acme").first)
        }
    }

    /// A broker on an injected clock, background refresher off, connected once to the fake.
    static func setUp(
        entry: String = "", environment: [String: String] = [:], configure: @Sendable (inout FakeOAuth2Provider.Behaviour) -> Void
    ) async throws -> Setup {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: clientSecret))
        provider.set(configure)
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry(extra: entry))}}",
            environment: ["FAKE_ACME_SECRET": clientSecret, "BROKER_REFRESH_INTERVAL": "0"].merging(environment) { $1 },
            now: { clock.now })
        let connected = await Browser(brokerPort: broker.port, providerPort: provider.port).connect(provider: "acme")
        #expect(connected?.status == 200)
        return Setup(provider: provider, broker: broker, clock: clock)
    }

    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func aThousandReadsOverAFiveMinuteTokensLifeRefreshItOnceWithHalfItsLifeLeft() async throws {
        let s = try await Self.setUp {
            $0.accessTokenLifetime = 300
            $0.refreshTokens = .rotate
        }
        let first = try await s.read()
        let issued = try #require(first["access_token"] as? String)
        var tokens: [String] = []
        // Reads 0.3 s apart from the start of the token's life to just before its end (BROKER_REFRESH_MARGIN 300 s).
        for index in 1...999 {
            s.clock.advance(0.3)
            tokens.append(try #require(try await s.read()["access_token"] as? String))
            if index == 495 { #expect(s.provider.refreshCalls == 0, "151.5 s left: not due yet") }
            if index == 505 { #expect(s.provider.refreshCalls == 1, "148.5 s left: refreshed") }
        }
        #expect(s.provider.refreshCalls == 1)
        #expect(Set(tokens).count == 2 && tokens.first == issued && tokens.last != issued)
        #expect(Self.occurrences(of: Self.notLongerLived, in: s.broker.log) == 0)
    }

    @Test func aRefreshThatGainsNothingIsLoggedOncePerAccountPerHour() async throws {
        let s = try await Self.setUp {
            $0.accessTokenLifetime = 3600
            $0.refreshTokens = .rotate
        }
        // 100 s left of 3600: due; the new token lives 60 s, so it ends before the old one would have.
        s.provider.set { $0.refreshedTokenLifetime = 60 }
        s.clock.advance(3500)
        _ = try await s.read()
        #expect(Self.occurrences(of: Self.notLongerLived, in: s.broker.log) == 1)
        // Again within the hour: no second line.
        s.provider.set { $0.refreshedTokenLifetime = 10 }
        s.clock.advance(35)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 2)
        #expect(Self.occurrences(of: Self.notLongerLived, in: s.broker.log) == 1)
        // A longer-lived token is no news.
        s.provider.set { $0.refreshedTokenLifetime = 7200 }
        s.clock.advance(5)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 3)
        // Over an hour after the first line: logged again, naming the account, never a token.
        s.provider.set { $0.refreshedTokenLifetime = 60 }
        s.clock.advance(7100)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 4)
        let log = s.broker.log
        #expect(Self.occurrences(of: Self.notLongerLived, in: log) == 2)
        let line = try #require(log.split(separator: "\n").first { $0.contains(Self.notLongerLived) })
        #expect(line.contains("\"level\":\"warning\"") && line.contains("acme:4242") && !line.contains("SENTINEL"))
    }

    @Test func anAnswerWithoutExpiresInHasNoExpiryAndIsNeverRefreshedOnRead() async throws {
        let s = try await Self.setUp {
            $0.sendsExpiresIn = false
            $0.refreshTokens = .rotate
        }
        let first = try await s.read()
        #expect(first["expires_at"] is NSNull)
        s.clock.advance(10 * 365 * 86_400)
        #expect(try await s.read()["access_token"] as? String == first["access_token"] as? String)
        #expect(s.provider.refreshCalls == 0)
    }

    @Test func defaultExpiresInGivesSuchATokenALifetimeAndTheMarginFitsIt() async throws {
        let s = try await Self.setUp(entry: "\"default_expires_in\": 600, \"refresh_margin\": 100") {
            $0.sendsExpiresIn = false
            $0.refreshTokens = .rotate
        }
        let stored = try await s.stored()
        #expect(stored.expiresAt == stored.issuedAt?.addingTimeInterval(600))
        // refresh_margin 100 s (under half of 600): 101 s left is not due, 100 s left is.
        s.clock.advance(499)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 0)
        s.clock.advance(1)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 1)
        let refreshed = try await s.stored()
        #expect(refreshed.expiresAt == s.clock.now.addingTimeInterval(600))
    }

    @Test func aRefreshTokenAboutToLapseIsRefreshedInTheBackgroundBeforeItDoes() async throws {
        let s = try await Self.setUp {
            $0.accessTokenLifetime = 36_000
            $0.refreshTokenLifetime = 3600
            $0.refreshTokens = .rotate
        }
        let connected = try await s.stored()
        #expect(connected.refreshTokenExpiresAt == connected.issuedAt?.addingTimeInterval(3600))
        let refresher = s.broker.broker.backgroundRefresher
        s.clock.advance(3000)
        #expect(try await refresher.runOnce().due == 0)
        // 300 s before the refresh token lapses (BROKER_REFRESH_MARGIN), though the access token has hours left.
        s.clock.advance(300)
        #expect(try await refresher.runOnce() == BackgroundRefresher.Summary(due: 1, refreshed: 1))
        #expect(s.provider.refreshCalls == 1)
        let refreshed = try await s.stored()
        #expect(refreshed.refreshTokenExpiresAt == s.clock.now.addingTimeInterval(3600))
        #expect(refreshed.refreshToken != connected.refreshToken)
        #expect(try await refresher.runOnce().due == 0)
        _ = try await s.read()
        #expect(s.provider.refreshCalls == 1)
    }

    @Test func theAnswersOtherFieldsComeBackUnderRawAndSurviveARefreshThatOmitsThem() async throws {
        let idToken = "eyJhbGciOiJub25lIn0.eyJzdWIiOiI0MjQyIn0.ID-TOKEN-SENTINEL"
        let key = "k1:" + Data((0..<32).map { UInt8($0) }).base64EncodedString()
        let s = try await Self.setUp(environment: ["BROKER_ENCRYPTION_KEY": key]) {
            $0.accessTokenLifetime = 3600
            $0.refreshTokens = .rotate
            $0.extraFields = [
                "id_token": JSONString.quote(idToken), "instance_url": #""https://na1.example.com""#,
                "signature": #""c2lnbmF0dXJl""#, "team": #"{"id":"T1","name":"Acme"}"#,
            ]
            $0.refreshExtraFields = ["signature": #""bmV3""#]
        }
        let raw = try #require(try await s.read()["raw"] as? [String: Any])
        #expect(raw["id_token"] as? String == idToken)
        #expect(raw["instance_url"] as? String == "https://na1.example.com")
        #expect((raw["team"] as? [String: Any])?["name"] as? String == "Acme")
        #expect(raw["refresh_token"] == nil && raw["access_token"] == nil && raw["expires_in"] == nil)
        // Sealed at rest like the tokens: the data directory never holds the ID token.
        #expect(!s.broker.dataDirectoryText().contains("ID-TOKEN-SENTINEL"))
        #expect(s.broker.dataDirectoryText().contains("na1.example.com"))
        s.clock.advance(3500)
        let after = try await s.read()
        #expect(s.provider.refreshCalls == 1)
        let refreshedRaw = try #require(after["raw"] as? [String: Any])
        #expect(refreshedRaw["signature"] as? String == "bmV3")
        #expect(refreshedRaw["id_token"] as? String == idToken)
        #expect(refreshedRaw["instance_url"] as? String == "https://na1.example.com")
        #expect(refreshedRaw["team"] == nil)
        #expect(!after.keys.contains("refresh_token"))
    }

    @Test func extrasOverSixteenKilobytesAreDroppedWithAWarningNamingTheProviderNotTheValues() async throws {
        let s = try await Self.setUp {
            $0.extraFields = ["blob": JSONString.quote("BLOB-SENTINEL-" + String(repeating: "x", count: 17_000))]
        }
        let account = try await s.read()
        #expect(account["raw"] == nil)
        let log = s.broker.log
        let line = try #require(log.split(separator: "\n").first { $0.contains("extra fields dropped") })
        #expect(line.contains("\"level\":\"warning\"") && line.contains("acme") && !line.contains("BLOB-SENTINEL"))
    }
}
