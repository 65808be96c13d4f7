import BrokerCore
import BrokerCrypto
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// The Redis account repository: the shared repository suite, then replicas, layout, codecs and all-or-nothing writes.
struct RedisAccountRepositoryTests {
    // MARK: Shared suite (a "restart" is a new client and repository on the same server)

    private func conformance(_ check: (RepositoryOpener) async throws -> Void) async throws {
        try await RedisServer.with { server async throws in
            try await check { RedisAccountRepository(client: server.client()) }
        }
    }

    @Test func putGetListDelete() async throws { try await conformance(AccountRepositoryConformance.putGetListDelete) }
    @Test func reauthorizationUpdatesSameRecord() async throws {
        try await conformance(AccountRepositoryConformance.reauthorizationUpdatesSameRecord)
    }
    @Test func listFiltersByProviderSortedByID() async throws {
        try await conformance(AccountRepositoryConformance.listFiltersByProviderSortedByID)
    }
    @Test func concurrentUpdatesAreNotLost() async throws {
        try await conformance(AccountRepositoryConformance.concurrentUpdatesAreNotLost)
    }
    @Test func concurrentPutsSurviveRestart() async throws {
        try await conformance(AccountRepositoryConformance.concurrentPutsSurviveRestart)
    }
    @Test func restartPreservesEveryField() async throws { try await conformance(AccountRepositoryConformance.restartPreservesEveryField) }
    @Test func enteredCredentialSurvivesRestart() async throws {
        try await conformance(AccountRepositoryConformance.enteredCredentialSurvivesRestart)
    }
    @Test func pageFiltersAndPages() async throws { try await conformance(AccountRepositoryConformance.pageFiltersAndPages) }
    @Test func pagingUnderConcurrentInserts() async throws {
        try await conformance(AccountRepositoryConformance.pagingUnderConcurrentInserts)
    }
    @Test func updateEdgeCases() async throws { try await conformance(AccountRepositoryConformance.updateEdgeCases) }
    @Test func canonicallyEquivalentIDsAreDistinct() async throws {
        try await conformance(AccountRepositoryConformance.canonicallyEquivalentIDsAreDistinct)
    }
    @Test func longestUIDsAreStorable() async throws { try await conformance(AccountRepositoryConformance.longestUIDsAreStorable) }
    @Test func statusCountsFollowWrites() async throws { try await conformance(AccountRepositoryConformance.statusCountsFollowWrites) }

    // MARK: Replicas

    @Test func twoReplicasSeeEachOthersWritesAtOnce() async throws {
        try await RedisServer.with { server async throws in
            let first = RedisAccountRepository(client: server.client())
            let second = RedisAccountRepository(client: server.client())
            let account = Account.make(uid: "shared")
            try await first.put(account)
            #expect(try await second.get(id: account.accountID) == account)
            let renamed = try await second.update(id: account.accountID) { current in
                var next = current
                next?.screenName = "renamed by replica two"
                return next
            }
            #expect(try await first.get(id: account.accountID) == renamed)
            #expect(try await first.list(provider: "github") == [renamed].compactMap { $0 })
            #expect(try await first.delete(id: account.accountID) == renamed)
            #expect(try await second.get(id: account.accountID) == nil)
            #expect(try await second.list(provider: nil).isEmpty)
        }
    }

    @Test func concurrentUpdatesFromTwoReplicasAreNotLost() async throws {
        try await RedisServer.with { server async throws in
            let replicas = [RedisAccountRepository(client: server.client()), RedisAccountRepository(client: server.client())]
            let id = Account.make(uid: "counter").accountID
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<60 {
                    let replica = replicas[index % 2]
                    group.addTask {
                        _ = try await replica.update(id: id) { current in
                            var account = current ?? Account.make(uid: "counter", scope: "0")
                            account.scope = String(Int(account.scope ?? "0")! + 1)
                            return account
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await replicas[0].get(id: id)?.scope == "60")
        }
    }

    // MARK: Layout and codecs

    @Test func recordIsTheCodecBytesListedInBothIndexes() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let repository = RedisAccountRepository(client: client)
            let account = Account.makeFull()
            try await repository.put(account)
            let stored = try await client.command("GET", "tb:account:twitter:783214")
            #expect(stored.bytes == (try PlainJSONAccountCodec().encode(account)))
            #expect(try await client.command("SMEMBERS", "tb:accounts") == .array([.bulk(Array("twitter:783214".utf8))]))
            #expect(try await client.command("SMEMBERS", "tb:accounts:twitter") == .array([.bulk(Array("twitter:783214".utf8))]))
            _ = try await repository.delete(id: account.accountID)
            #expect(try await client.command("KEYS", "*") == .array([]))
        }
    }

    @Test func anEncryptingCodecPlugsInAndOnlyItsBytesAreStored() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let repository = RedisAccountRepository(client: client, codec: ScramblingTestCodec())
            let account = Account.makeFull()
            try await repository.put(account)
            let raw = try #require(try await client.command("GET", "tb:account:\(account.id)").bytes)
            #expect(raw.starts(with: ScramblingTestCodec.header))
            #expect(!String(decoding: raw, as: UTF8.self).contains("SENTINEL"))
            #expect(
                try await RedisAccountRepository(client: server.client(), codec: ScramblingTestCodec()).get(id: account.accountID)
                    == account)
            // A repository with another codec cannot read it, and says which key is at fault.
            let error = await #expect(throws: StoreError.self) {
                try await RedisAccountRepository(client: client).get(id: account.accountID)
            }
            guard case .corrupt(let path, _)? = error else {
                Issue.record("expected corrupt, got \(String(describing: error))")
                return
            }
            #expect(path == "redis key tb:account:twitter:783214")
        }
    }

    @Test func keyPrefixesKeepRepositoriesApart() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            let blue = RedisAccountRepository(client: client, keyPrefix: "blue:")
            let green = RedisAccountRepository(client: client, keyPrefix: "green:")
            try await blue.put(Account.make(uid: "1"))
            try await green.put(Account.make(uid: "2"))
            #expect(try await blue.list(provider: nil).map(\.id) == ["github:1"])
            #expect(try await green.list(provider: "github").map(\.id) == ["github:2"])
            #expect(try await client.command("EXISTS", "blue:account:github:1", "blue:accounts", "blue:accounts:github") == .integer(3))
        }
    }

    @Test func accountsWrittenBeforeTheStatusCountsAreCountedOnceThenKeptUpToDate() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client()
            // Sealed records: the count reads status and expiry without opening a secret.
            let keyring = try EncryptionKeyring.parse(Base64.encode(SecureRandom.bytes(32)))
            let repository = RedisAccountRepository(client: client, codec: EncryptedAccountCodec(keyring: keyring))
            var expired = Account.make(uid: "1")
            expired.expiresAt = Date.fixture.addingTimeInterval(-1)
            var dead = Account.makeFull()
            dead.status = .reauthorizationRequired
            for account in [expired, dead, Account.make(uid: "2")] { try await repository.put(account) }
            // As an older version left them: records and indexes, no counts.
            _ = try await client.command("DEL", "tb:census:reauthorization_required", "tb:census:expiring", "tb:census:ready")
            let counts = try await repository.statusCounts(at: .fixture)
            #expect(counts == AccountStatusCounts(active: 1, expired: 1, reauthorizationRequired: 1))
            #expect(try await client.command("EXISTS", "tb:census:ready") == .integer(1))
            let score = try #require(try await client.command("ZSCORE", "tb:census:expiring", expired.id).string.flatMap(Double.init))
            #expect(abs(score - expired.expiresAt!.timeIntervalSince1970) < 0.001)
            // From then on the writes keep them: no second pass.
            _ = try await repository.delete(id: dead.accountID)
            #expect(
                try await repository.statusCounts(at: .fixture) == AccountStatusCounts(active: 1, expired: 1, reauthorizationRequired: 0))
        }
    }

    @Test func anUpdateReturningAnotherIDIsRefusedAndChangesNothing() async throws {
        try await RedisServer.with { server async throws in
            let client = server.client(poolSize: 1)
            let repository = RedisAccountRepository(client: client)
            let account = Account.make(uid: "1")
            try await repository.put(account)
            await #expect(throws: StoreError.self) {
                _ = try await repository.update(id: account.accountID) { _ in Account.make(uid: "2") }
            }
            #expect(try await repository.list(provider: nil) == [account])
            // The refused update's WATCH is gone: after another writer touches the key,
            // the next transaction on the same (only) connection still commits.
            _ = try await server.client().command("SET", "tb:account:github:1", "touched")
            let replies = try await client.pipeline([["MULTI"], ["SET", "other", "1"], ["EXEC"]])
            #expect(replies.last == .array([.simpleString("OK")]))
        }
    }

    // MARK: Failures

    /// A user who may write account keys but not the index sets: a non-atomic put would leave an unindexed record.
    private static let indexDenyingUser = ["ACL", "SETUSER", "partial", "on", ">SENTINEL-acl", "~tb:account:*", "+@all"]

    @Test func aRefusedWriteLeavesNoPartialState() async throws {
        try await RedisServer.with { server async throws in
            let admin = server.client()
            _ = try await admin.command(RedisCommand(Self.indexDenyingUser))
            let partial = RedisAccountRepository(client: RedisClient(url: server.url(username: "partial", password: "SENTINEL-acl")))
            let error = await #expect(throws: StoreError.self) { try await partial.put(Account.make(uid: "1")) }
            guard case .unavailable(let message)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(message.contains("NOPERM"), "\(message)")
            #expect(!message.contains("SENTINEL"))
            #expect(try await admin.command("EXISTS", "tb:account:github:1") == .integer(0))
            #expect(try await admin.command("DBSIZE") == .integer(0))
        }
    }

    @Test func aRefusedDeleteLeavesTheAccountWhole() async throws {
        try await RedisServer.with { server async throws in
            let admin = server.client()
            let repository = RedisAccountRepository(client: admin)
            let account = Account.make(uid: "1")
            try await repository.put(account)
            _ = try await admin.command(RedisCommand(Self.indexDenyingUser))
            let partial = RedisAccountRepository(client: RedisClient(url: server.url(username: "partial", password: "SENTINEL-acl")))
            await #expect(throws: StoreError.self) { _ = try await partial.delete(id: account.accountID) }
            #expect(try await partial.get(id: account.accountID) == account)
            #expect(try await repository.list(provider: "github") == [account])
        }
    }
}
