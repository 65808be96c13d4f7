import Testing

@testable import BrokerRedis

/// The decision whether a replica may join the others: pure, every verdict.
struct ReplicaAgreementTests {
    static func mine(_ keys: [(String, String)], secret: String = "s") -> ReplicaFingerprints {
        ReplicaFingerprints(keys: keys.map { .init(id: $0.0, fingerprint: $0.1) }, secret: secret)
    }

    @Test func anEmptyStoreRecordsTheCurrentKeyAndTheSecretOnly() {
        let verdict = ReplicaAgreement.verdict(recorded: [:], mine: Self.mine([("new", "N"), ("old", "O")]))
        #expect(verdict == .agree(record: ["key:new": "N", "secret": "s"]))
    }

    @Test func aReplicaWithTheRecordedKeyAndSecretRecordsNothing() {
        let verdict = ReplicaAgreement.verdict(recorded: ["key:k1": "A", "secret": "s"], mine: Self.mine([("k1", "A")]))
        #expect(verdict == .agree(record: [:]))
    }

    @Test func theSameIDWithAnotherKeyDiffers() {
        let recorded = ["key:k1": "A", "secret": "s"]
        #expect(ReplicaAgreement.verdict(recorded: recorded, mine: Self.mine([("k1", "B")])) == .keyDiffers(id: "k1"))
        // An older key listed under a recorded id is checked too.
        #expect(ReplicaAgreement.verdict(recorded: recorded, mine: Self.mine([("k2", "C"), ("k1", "B")])) == .keyDiffers(id: "k1"))
    }

    @Test func noKeyInCommonCannotOpenAnything() {
        let verdict = ReplicaAgreement.verdict(
            recorded: ["key:b", "key:a"].reduce(into: [:]) { $0[$1] = "X" }, mine: Self.mine([("c", "C")]))
        #expect(verdict == .noKeyInCommon(recorded: ["a", "b"]))
    }

    @Test func aRotationIsAcceptedAndRecordsTheNewKey() {
        let verdict = ReplicaAgreement.verdict(recorded: ["key:old": "O", "secret": "s"], mine: Self.mine([("new", "N"), ("old", "O")]))
        #expect(verdict == .agree(record: ["key:new": "N"]))
        // Listing the new key second (reading it before sealing with it) records nothing.
        #expect(
            ReplicaAgreement.verdict(recorded: ["key:old": "O", "secret": "s"], mine: Self.mine([("old", "O"), ("new", "N")]))
                == .agree(record: [:]))
    }

    @Test func aReplicaLackingARecordedKeyIsRefused() {
        let recorded = ["key:old": "O", "key:new": "N", "secret": "s"]
        #expect(ReplicaAgreement.verdict(recorded: recorded, mine: Self.mine([("old", "O")])) == .keysMissing(["new"]))
        #expect(ReplicaAgreement.verdict(recorded: recorded, mine: Self.mine([("new", "N")])) == .keysMissing(["old"]))
    }

    @Test func anotherSecretDiffersOnceTheKeysAgree() {
        #expect(
            ReplicaAgreement.verdict(recorded: ["key:k1": "A", "secret": "s"], mine: Self.mine([("k1", "A")], secret: "t"))
                == .secretDiffers)
        #expect(
            ReplicaAgreement.verdict(recorded: ["key:k1": "A", "secret": "s"], mine: Self.mine([("k1", "B")], secret: "t"))
                == .keyDiffers(id: "k1"))
    }

    @Test func unknownFieldsAreIgnored() {
        let verdict = ReplicaAgreement.verdict(recorded: ["version": "9", "secret": "s"], mine: Self.mine([("k1", "A")]))
        #expect(verdict == .agree(record: ["key:k1": "A"]))
    }

    @Test func messagesNameTheVariableAndKeyIDsButNoFingerprint() throws {
        let mine = Self.mine([("mine", "FINGERPRINT-MINE")])
        let differs = try #require(ReplicaDisagreement(.keyDiffers(id: "k1"), mine: mine, keyOrigin: nil, secretOrigin: nil))
        #expect("\(differs)".hasPrefix("BROKER_ENCRYPTION_KEY differs from the key the other replicas use (key id k1)"))
        let disjoint = try #require(
            ReplicaDisagreement(.noKeyInCommon(recorded: ["k1"]), mine: mine, keyOrigin: "generated", secretOrigin: nil))
        #expect("\(disjoint)".contains("(key id k1; this replica's is mine)"))
        #expect("\(disjoint)".contains("not set here"))
        let missing = try #require(ReplicaDisagreement(.keysMissing(["k2"]), mine: mine, keyOrigin: nil, secretOrigin: nil))
        #expect("\(missing)".hasPrefix("BROKER_ENCRYPTION_KEY lacks key id k2"))
        let secret = try #require(ReplicaDisagreement(.secretDiffers, mine: mine, keyOrigin: nil, secretOrigin: nil))
        #expect(secret.variable == "BROKER_SECRET")
        for error in [differs, disjoint, missing, secret] { #expect(!"\(error)".contains("FINGERPRINT")) }
        #expect(ReplicaDisagreement(.agree(record: [:]), mine: mine, keyOrigin: nil, secretOrigin: nil) == nil)
    }
}
