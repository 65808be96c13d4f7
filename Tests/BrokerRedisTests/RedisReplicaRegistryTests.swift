import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The replicas' agreement kept in a real Redis: fingerprints, generated key and secret, races between starting replicas.
struct RedisReplicaRegistryTests {
    static func keyring(_ text: String) throws -> EncryptionKeyring { try EncryptionKeyring.parse(text) }
    static func key(_ id: String, _ byte: UInt8) -> String { "\(id):" + Base64.encode([UInt8](repeating: byte, count: 32)) }
    static let secret = Array("a-cookie-secret-of-at-least-32-characters".utf8)

    @Test func ofManyReplicasStartingAtOnceWithDifferentKeysExactlyOneJoins() async throws {
        try await RedisServer.with { server async throws in
            let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        let registry = RedisReplicaRegistry(client: server.client(poolSize: 1))
                        let mine = ReplicaFingerprints(
                            keyring: try Self.keyring(Self.key("k\(index)", UInt8(index))), cookieSecret: Self.secret)
                        do {
                            try await registry.agree(mine)
                            return true
                        } catch is ReplicaDisagreement {
                            return false
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 1)
            let recorded = try await RedisReplicaRegistry(client: server.client()).recorded()
            #expect(recorded.keys.filter { $0.hasPrefix("key:") }.count == 1)
            #expect(recorded["secret"] == ReplicaFingerprints.secretFingerprint(Self.secret))
        }
    }

    @Test func theFingerprintsHoldNoKeyOrSecret() async throws {
        try await RedisServer.with { server async throws in
            let keyText = Self.key("k1", 7)
            try await RedisReplicaRegistry(client: server.client()).agree(
                ReplicaFingerprints(keyring: try Self.keyring(keyText), cookieSecret: Self.secret))
            let reply = try await server.client().command("HGETALL", "tb:replicas:fingerprints")
            let dump = (reply.array ?? []).compactMap(\.string).joined(separator: " ")
            #expect(!dump.contains(String(keyText.dropFirst(3))))
            #expect(!dump.contains(Hex.encode([UInt8](repeating: 7, count: 32))))
            #expect(!dump.contains("a-cookie-secret"))
            #expect(dump.contains("key:k1"))
        }
    }

    @Test func replicasWithoutAKeyShareTheOneTheFirstGenerated() async throws {
        try await RedisServer.with { server async throws in
            let keyrings = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let registry = RedisReplicaRegistry(client: server.client(poolSize: 1))
                        let generated = try await registry.generatedKeyring(fileKey: nil)
                        let secret = try await registry.generatedSecret(fileSecret: nil)
                        try await registry.agree(ReplicaFingerprints(keyring: generated.keyring, cookieSecret: secret.secret))
                        return generated.keyring.keys.map(\.fingerprint) + [Hex.encode(secret.secret)]
                    }
                }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            #expect(Set(keyrings).count == 1)
            let stored = try #require(try await server.client().command("GET", "tb:generated:encryption-key").string)
            #expect(try Self.keyring(stored).keys.count == 1)
        }
    }

    @Test func aKeyGeneratedInTheDataDirectoryByAnEarlierVersionIsAdoptedThenKeptReadable() async throws {
        try await RedisServer.with { server async throws in
            let registry = RedisReplicaRegistry(client: server.client())
            let first = Base64.encode([UInt8](repeating: 1, count: 32)) + "\n"
            let adopted = try await registry.generatedKeyring(fileKey: first)
            #expect(adopted.origin == .adoptedFile)
            #expect(adopted.keyring.current.fingerprint == (try Self.keyring(first)).current.fingerprint)
            // A second replica whose own directory held another key: the shared one seals, its own stays readable.
            let second = Base64.encode([UInt8](repeating: 2, count: 32))
            let extended = try await registry.generatedKeyring(fileKey: second)
            #expect(extended.origin == .storedWithFile)
            #expect(extended.keyring.ids == [adopted.keyring.current.id, try Self.keyring(second).current.id])
            // The first replica restarting gets both; the same file again adds nothing.
            #expect(try await registry.generatedKeyring(fileKey: first).keyring.ids == extended.keyring.ids)
            #expect(try await registry.generatedKeyring(fileKey: nil).origin == .stored)
        }
    }

    @Test func anUnsetKeyOrSecretIsRefusedWhenTheOthersWereGivenOne() async throws {
        try await RedisServer.with { server async throws in
            let registry = RedisReplicaRegistry(client: server.client())
            try await registry.agree(ReplicaFingerprints(keyring: try Self.keyring(Self.key("given", 3)), cookieSecret: Self.secret))
            await #expect(throws: ReplicaDisagreement.self) { _ = try await registry.generatedKeyring(fileKey: nil) }
            await #expect(throws: ReplicaDisagreement.self) { _ = try await registry.generatedSecret(fileSecret: nil) }
            #expect(try await server.client().command("EXISTS", "tb:generated:encryption-key", "tb:generated:broker-secret") == .integer(0))
            // The connection went back to the pool clean: a later transaction on it commits.
            try await registry.agree(ReplicaFingerprints(keyring: try Self.keyring(Self.key("given", 3)), cookieSecret: Self.secret))
        }
    }

    @Test func retiringKeysKeepsTheCurrentAndStepsBackWhenSomeoneRecordedMeanwhile() async throws {
        try await RedisServer.with { server async throws in
            let registry = RedisReplicaRegistry(client: server.client())
            try await registry.agree(ReplicaFingerprints(keyring: try Self.keyring(Self.key("old", 1)), cookieSecret: Self.secret))
            let rotated = ReplicaFingerprints(
                keyring: try Self.keyring(Self.key("new", 2) + "," + Self.key("old", 1)), cookieSecret: Self.secret)
            let recorded = try await registry.agree(rotated)
            #expect(Set(recorded.keys) == ["key:new", "key:old", "secret"])
            #expect(try await registry.retireKeys(except: "new", expected: ["secret": "changed"]) == nil)
            #expect(try await registry.retireKeys(except: "new", expected: recorded) == ["old"])
            #expect(Set(try await registry.recorded().keys) == ["key:new", "secret"])
            // A replica given only the new key now joins.
            try await registry.agree(ReplicaFingerprints(keyring: try Self.keyring(Self.key("new", 2)), cookieSecret: Self.secret))
        }
    }
}
