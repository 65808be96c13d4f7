import BrokerCore
import BrokerCrypto
import Foundation
import Synchronization

/// Account records exactly as the broker wrote them before the record schema became one generic type.
///
/// The bytes were captured from ``PlainJSONAccountCodec`` and from ``EncryptedAccountCodec`` with the
/// key ``key`` and nonces counting up from 1 (see ``sealingCodec(firstNonce:)``), for the accounts of
/// ``full``, ``minimal`` and ``odd``. They must keep decoding, and re-encode to the same bytes.
enum AccountRecordFixtures {
    /// The keyring setting the sealed records were written with: id `k1`, 32 bytes of 7.
    static let key = "k1:" + Base64.encode([UInt8](repeating: 7, count: 32))

    /// A sealing codec for ``key`` whose nonces are 11 zero bytes and then `firstNonce`, `firstNonce + 1`, ….
    static func sealingCodec(firstNonce: UInt8) throws -> EncryptedAccountCodec {
        let counter = Mutex<UInt8>(firstNonce)
        return EncryptedAccountCodec(
            keyring: try EncryptionKeyring.parse(key),
            randomBytes: { count in
                let next = counter.withLock { value in
                    defer { value &+= 1 }
                    return value
                }
                return [UInt8](repeating: 0, count: count - 1) + [next]
            })
    }

    /// Every optional field set, a scope with a slash, dates with a fraction.
    static var full: Account {
        Account(
            provider: "twitter", uid: "783214", accessToken: Secret("access-SENTINEL-1"), tokenType: "bearer",
            scope: "a/b c", refreshToken: Secret("refresh-SENTINEL-2"), tokenSecret: Secret("secret-SENTINEL-3"),
            screenName: "Twitter API", expiresAt: Date(timeIntervalSince1970: 1_796_025_600 + 3600.25),
            createdAt: Date(timeIntervalSince1970: 1_796_025_600 - 86_400), updatedAt: Date(timeIntervalSince1970: 1_796_025_600),
            refreshedAt: Date(timeIntervalSince1970: 1_796_025_600 - 60), status: .reauthorizationRequired)
    }

    /// Only the required fields and a token type.
    static var minimal: Account {
        Account(
            provider: "github", uid: "1001", accessToken: Secret("gho_access_github_1001"), tokenType: "bearer",
            createdAt: Date(timeIntervalSince1970: 1_796_025_600), updatedAt: Date(timeIntervalSince1970: 1_796_025_600))
    }

    /// A uid with a colon, a slash, quotes, a backslash, an accent and an emoji; a token JSON must escape;
    /// an expiry below the millisecond (written to the millisecond).
    static var odd: Account {
        Account(
            provider: "github", uid: "caf\u{E9}:/ \"q\" \\ \u{1F642}", accessToken: Secret("tok/en\n\u{1}"),
            tokenType: "bearer", screenName: "Zo\u{EB} <b>&", expiresAt: Date(timeIntervalSince1970: 1_796_029_200.123_456),
            createdAt: Date(timeIntervalSince1970: 1_796_025_600), updatedAt: Date(timeIntervalSince1970: 1_796_025_600))
    }

    /// ``full`` written by `PlainJSONAccountCodec`.
    static let plainFull: [UInt8] =
        Array(
            #"""
            {
              "access_token" : "access-SENTINEL-1",
              "created_at" : "2026-11-29T08:00:00Z",
              "expires_at" : "2026-11-30T09:00:00.250Z",
              "id" : "twitter:783214",
              "provider" : "twitter",
              "refresh_token" : "refresh-SENTINEL-2",
              "refreshed_at" : "2026-11-30T07:59:00Z",
              "scope" : "a/b c",
              "screen_name" : "Twitter API",
              "status" : "reauthorization_required",
              "token_secret" : "secret-SENTINEL-3",
              "token_type" : "bearer",
              "uid" : "783214",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]

    /// ``minimal`` written by `PlainJSONAccountCodec`.
    static let plainMinimal: [UInt8] =
        Array(
            #"""
            {
              "access_token" : "gho_access_github_1001",
              "created_at" : "2026-11-30T08:00:00Z",
              "id" : "github:1001",
              "provider" : "github",
              "status" : "active",
              "token_type" : "bearer",
              "uid" : "1001",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]

    /// ``odd`` written by `PlainJSONAccountCodec`.
    static let plainOdd: [UInt8] =
        Array(
            #"""
            {
              "access_token" : "tok/en\n\u0001",
              "created_at" : "2026-11-30T08:00:00Z",
              "expires_at" : "2026-11-30T09:00:00.123Z",
              "id" : "github:café:/ \"q\" \\ 🙂",
              "provider" : "github",
              "screen_name" : "Zoë <b>&",
              "status" : "active",
              "token_type" : "bearer",
              "uid" : "café:/ \"q\" \\ 🙂",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]

    /// ``full`` written by `EncryptedAccountCodec`, nonces from 1.
    static let sealedFull: [UInt8] =
        Array(
            #"""
            {
              "access_token" : {
                "ct" : "iHQwc7UeSxeHyi0LRmAJguKLuBIM8mEkTTovOTgoRs-t",
                "kid" : "k1",
                "nonce" : "AAAAAAAAAAAAAAAB"
              },
              "created_at" : "2026-11-29T08:00:00Z",
              "encryption" : "chacha20-poly1305",
              "expires_at" : "2026-11-30T09:00:00.250Z",
              "id" : "twitter:783214",
              "provider" : "twitter",
              "refresh_token" : {
                "ct" : "No6gz6RYggTIM7_P1HcGPii6PF6Nh2OGY06tFA3BAFn-3Q",
                "kid" : "k1",
                "nonce" : "AAAAAAAAAAAAAAAC"
              },
              "refreshed_at" : "2026-11-30T07:59:00Z",
              "scope" : "a/b c",
              "screen_name" : "Twitter API",
              "status" : "reauthorization_required",
              "token_secret" : {
                "ct" : "xR20ocBcabev6YvKZ72-6zPgeEk31xDtQwDbdgMR1Npd",
                "kid" : "k1",
                "nonce" : "AAAAAAAAAAAAAAAD"
              },
              "token_type" : "bearer",
              "uid" : "783214",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]

    /// ``minimal`` written by `EncryptedAccountCodec`, nonces from 4.
    static let sealedMinimal: [UInt8] =
        Array(
            #"""
            {
              "access_token" : {
                "ct" : "LU3oybgW3johlALkTlcMuvniY8BTOx4CiR69I42o6CkFA2yQ5ug",
                "kid" : "k1",
                "nonce" : "AAAAAAAAAAAAAAAE"
              },
              "created_at" : "2026-11-30T08:00:00Z",
              "encryption" : "chacha20-poly1305",
              "id" : "github:1001",
              "provider" : "github",
              "status" : "active",
              "token_type" : "bearer",
              "uid" : "1001",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]

    /// ``odd`` written by `EncryptedAccountCodec`, nonces from 5.
    static let sealedOdd: [UInt8] =
        Array(
            #"""
            {
              "access_token" : {
                "ct" : "Z879vYkgT3f4nRBfNGCpfSSmdO5Fq1bL",
                "kid" : "k1",
                "nonce" : "AAAAAAAAAAAAAAAF"
              },
              "created_at" : "2026-11-30T08:00:00Z",
              "encryption" : "chacha20-poly1305",
              "expires_at" : "2026-11-30T09:00:00.123Z",
              "id" : "github:café:/ \"q\" \\ 🙂",
              "provider" : "github",
              "screen_name" : "Zoë <b>&",
              "status" : "active",
              "token_type" : "bearer",
              "uid" : "café:/ \"q\" \\ 🙂",
              "updated_at" : "2026-11-30T08:00:00Z",
              "version" : 1
            }
            """#.utf8) + [0x0A]
}
