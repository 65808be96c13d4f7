import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

/// The encrypted record format: readable JSON with ChaCha20-Poly1305 envelopes for the secrets.
struct EncryptedAccountCodecTests {
    private let keyA = EncryptedRecordFixtures.keyText()
    private let keyB = EncryptedRecordFixtures.keyText()
    private static let path = "/data/accounts/twitter%3A783214.json"
    private static let sentinels = ["access-SENTINEL-1", "refresh-SENTINEL-2", "secret-SENTINEL-3"]

    /// True when `error` is a corrupt-record error for ``path`` whose reason contains `fragment` and no secret.
    private static func isCorrupt(_ error: any Error, _ fragment: String) -> Bool {
        guard case .corrupt(let path, let reason) = error as? StoreError else { return false }
        return path == Self.path && reason.contains(fragment) && !sentinels.contains { reason.contains($0) }
    }

    @Test func roundTripsEveryField() throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let full = Account.makeFull()
        #expect(try codec.decode(codec.encode(full), path: Self.path) == full)
        let minimal = Account.make(scope: nil)
        #expect(try codec.decode(codec.encode(minimal), path: Self.path) == minimal)
        let empty = Account.make(accessToken: "")
        #expect(try codec.decode(codec.encode(empty), path: Self.path) == empty)
    }

    @Test func storedIsWhatTheWrittenBytesDecodeTo() throws {
        var account = Account.makeFull()
        // Sub-millisecond dates and text that JSON must escape: what a restart would read differs from the argument.
        account.expiresAt = Date(timeIntervalSince1970: 1_796_029_200.123_456)
        account.updatedAt = Date(timeIntervalSince1970: 1_796_025_600.987_654)
        account.screenName = "Zoë \"quoted\" \\ back\nslash 🙂"
        account.scope = "a/b c"
        let codecs: [any AccountRecordCodec] = [try EncryptedRecordFixtures.codec(keyA), PlainJSONAccountCodec()]
        for codec in codecs {
            let stored = try codec.stored(account, path: Self.path)
            #expect(stored == (try codec.decode(codec.encode(account), path: Self.path)))
            #expect(stored != account)
        }
    }

    @Test func secretsAreSealedAndEverythingElseStaysReadable() throws {
        let codec = try EncryptedRecordFixtures.codec("k1:\(keyA)")
        let bytes = try codec.encode(.makeFull())
        let text = String(decoding: bytes, as: UTF8.self)
        for sentinel in Self.sentinels { #expect(!text.contains(sentinel)) }
        #expect(!text.contains("SENTINEL"))
        let record = try EncryptedRecordFixtures.json(bytes)
        #expect(record["version"] as? Int == 1)
        #expect(record["encryption"] as? String == "chacha20-poly1305")
        #expect(record["provider"] as? String == "twitter")
        #expect(record["uid"] as? String == "783214")
        #expect(record["screen_name"] as? String == "Twitter API")
        #expect(record["created_at"] as? String == "2026-11-29T08:00:00Z")
        #expect(record["status"] as? String == "reauthorization_required")
        for field in ["access_token", "refresh_token", "token_secret"] {
            let envelope = try EncryptedRecordFixtures.envelope(record, field)
            #expect(Set(envelope.keys) == ["ct", "kid", "nonce"])
            #expect(envelope["kid"] == "k1")
            #expect(Base64URL.decode(envelope["nonce"] ?? "")?.count == 12)
        }
        #expect(text.hasSuffix("}\n") && text.contains("\n  \"access_token\" : {"))
    }

    @Test func envelopeIsChaCha20Poly1305WithRecordAndFieldAsAssociatedData() throws {
        let key = SecureRandom.bytes(32)
        let nonce = SecureRandom.bytes(12)
        let keyring = try EncryptionKeyring.parse("k1:" + Base64.encode(key))
        let codec = EncryptedAccountCodec(keyring: keyring) { count in Array(nonce.prefix(count)) }
        let record = try EncryptedRecordFixtures.json(codec.encode(.makeFull()))
        let envelope = try EncryptedRecordFixtures.envelope(record, "refresh_token")
        // Computed independently with the RFC 8439 primitive: ct is ciphertext then tag, both base64url.
        let expected = ChaCha20Poly1305.seal(
            key: key, nonce: nonce, plaintext: Array("refresh-SENTINEL-2".utf8),
            aad: Array("tb1|twitter:783214|refresh_token".utf8))
        #expect(envelope["ct"] == Base64URL.encode(expected.ciphertext + expected.tag))
        #expect(envelope["nonce"] == Base64URL.encode(nonce))
    }

    @Test func everyFieldAndEveryWriteGetsAFreshNonce() throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let first = try EncryptedRecordFixtures.json(codec.encode(.makeFull()))
        let second = try EncryptedRecordFixtures.json(codec.encode(.makeFull()))
        let fields = ["access_token", "refresh_token", "token_secret"]
        let envelopes =
            try fields.map { try EncryptedRecordFixtures.envelope(first, $0) }
            + fields.map { try EncryptedRecordFixtures.envelope(second, $0) }
        #expect(Set(envelopes.compactMap { $0["nonce"] }).count == 6)
        #expect(Set(envelopes.compactMap { $0["ct"] }).count == 6)
    }

    @Test func plaintextRecordOfAnEarlierVersionIsReadAndNeedsRekey() throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let plain = try PlainJSONAccountCodec().encode(.makeFull())
        #expect(try codec.decode(plain, path: Self.path) == .makeFull())
        #expect(try codec.needsRekey(plain, path: Self.path))
        #expect(try !codec.needsRekey(codec.encode(.makeFull()), path: Self.path))
    }

    @Test func olderKeyStillOpensAndIsReportedForRekey() throws {
        let old = try EncryptedRecordFixtures.codec("a:\(keyA)").encode(.makeFull())
        let rotated = try EncryptedRecordFixtures.codec("b:\(keyB),a:\(keyA)")
        #expect(try rotated.decode(old, path: Self.path) == .makeFull())
        #expect(try rotated.needsRekey(old, path: Self.path))
        let rewritten = try rotated.encode(rotated.decode(old, path: Self.path))
        #expect(try EncryptedRecordFixtures.kids(rewritten) == ["b", "b", "b"])
        #expect(try !rotated.needsRekey(rewritten, path: Self.path))
    }

    @Test func wrongKeyUnderTheSameIDFailsAuthentication() throws {
        let bytes = try EncryptedRecordFixtures.codec("k1:\(keyA)").encode(.makeFull())
        let wrong = try EncryptedRecordFixtures.codec("k1:\(keyB)")
        #expect { _ = try wrong.decode(bytes, path: Self.path) } throws: { error in
            Self.isCorrupt(error, "cannot decrypt access_token with key \"k1\": wrong key or tampered data")
        }
    }

    @Test func unknownKeyIDIsNamedWithTheKeysThatAreHeld() throws {
        let bytes = try EncryptedRecordFixtures.codec("k1:\(keyA)").encode(.makeFull())
        let other = try EncryptedRecordFixtures.codec("k2:\(keyB)")
        #expect { _ = try other.decode(bytes, path: Self.path) } throws: { error in
            Self.isCorrupt(error, "access_token is sealed with key id \"k1\", which BROKER_ENCRYPTION_KEY does not hold (it holds k2)")
        }
    }

    @Test(arguments: [
        ("access_token", "ct", "first"), ("access_token", "ct", "last"), ("refresh_token", "ct", "middle"),
        ("token_secret", "nonce", "first"), ("token_secret", "ct", "last"),
    ])
    func flippedByteInCiphertextTagOrNonceIsRejected(field: String, part: String, position: String) throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let bytes = try codec.encode(.makeFull())
        let tampered = try EncryptedRecordFixtures.flip(bytes, field: field, part: part) { count in
            position == "first" ? 0 : position == "last" ? count - 1 : count / 2
        }
        #expect { _ = try codec.decode(tampered, path: Self.path) } throws: { error in
            Self.isCorrupt(error, "cannot decrypt \(field) with key")
        }
    }

    @Test func envelopeMovedToAnotherRecordOrFieldIsRejected() throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let victim = try codec.encode(.makeFull())
        let donor = try EncryptedRecordFixtures.json(
            codec.encode(
                Account(
                    provider: "twitter", uid: "999", accessToken: Secret("other-token"), refreshToken: Secret("other-refresh"),
                    tokenSecret: Secret("other-secret"), createdAt: .fixture, updatedAt: .fixture)))
        let moved = try EncryptedRecordFixtures.edit(victim) { $0["access_token"] = donor["access_token"] }
        #expect { _ = try codec.decode(moved, path: Self.path) } throws: { error in
            Self.isCorrupt(error, "cannot decrypt access_token")
        }
        let swapped = try EncryptedRecordFixtures.edit(victim) { record in
            (record["access_token"], record["refresh_token"]) = (record["refresh_token"], record["access_token"])
        }
        #expect { _ = try codec.decode(swapped, path: Self.path) } throws: { error in
            Self.isCorrupt(error, "cannot decrypt access_token")
        }
    }

    @Test(arguments: [
        ("drop marker", "is sealed but the record has no \"encryption\" field"),
        ("plaintext field", "access_token is plaintext in a record marked"),
        ("unknown scheme", "unsupported \"encryption\""),
        ("short nonce", "access_token has a malformed nonce"),
        ("bad ct", "access_token has a malformed ciphertext"),
        ("no kid", "missing field \"access_token.kid\""),
        ("number", "field \"access_token\" has the wrong type"),
    ])
    func malformedEnvelopeOrMarkerIsCorrupt(damage: String, reason: String) throws {
        let codec = try EncryptedRecordFixtures.codec(keyA)
        let bytes = try EncryptedRecordFixtures.edit(try codec.encode(.makeFull())) { record in
            var envelope = try EncryptedRecordFixtures.envelope(record, "access_token")
            switch damage {
            case "drop marker": record["encryption"] = nil
            case "plaintext field": record["access_token"] = "planted-token"
            case "unknown scheme": record["encryption"] = "rot13"
            case "short nonce": envelope["nonce"] = "AAAA"; record["access_token"] = envelope
            case "bad ct": envelope["ct"] = "!!"; record["access_token"] = envelope
            case "no kid": envelope["kid"] = nil; record["access_token"] = envelope
            default: record["access_token"] = 42
            }
        }
        #expect { _ = try codec.decode(bytes, path: Self.path) } throws: { error in Self.isCorrupt(error, reason) }
    }
}
