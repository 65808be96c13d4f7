import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// `token-broker rekey` on PostgreSQL: every record not sealed with the current key is resealed, nothing else moves.
struct PostgresAccountRekeyTests {
    static let keyA = "a:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).base64EncodedString()
    static let keyB = "b:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }).base64EncodedString()

    @Test func plaintextAndOldKeyRecordsAreResealedWithTheCurrentKeyAndReadTheSame() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            _ = try await PostgresSchema.migrate(client)
            // Two plaintext records (as `migrate` copies them from an unencrypted store), three sealed with the old key
            // A, two with the current key B; more than a page of rows would need a bigger store, so the page is the same code.
            let plain = PostgresAccountRepository(client: client, codec: PlainJSONAccountCodec())
            let old = PostgresAccountRepository(
                client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyA)))
            let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB + "," + Self.keyA))
            let current = PostgresAccountRepository(client: client, codec: codec)
            var accounts: [Account] = []
            for i in 0..<7 {
                let account = Account.make(uid: "rekey-\(i)")
                accounts.append(account)
                try await (i < 2 ? plain : i < 5 ? old : current).put(account)
            }
            let record = { (id: String) async throws -> [UInt8]? in
                try await client.query("SELECT record FROM accounts WHERE id = $1", [.text(id)]).rows.first?.bytea(0)
            }
            let untouched = try await record(accounts[6].id)

            let result = try await current.rekey(codec: codec)
            #expect(result.rewritten == 5 && result.total == 7)
            for account in accounts {
                let bytes = try #require(try await record(account.id))
                #expect(try codec.needsRekey(bytes, path: account.id) == false)
                #expect(try await current.get(id: account.accountID) == account)
            }
            // A record already sealed with the current key keeps its bytes, and a second run rewrites nothing.
            #expect(try await record(accounts[6].id) == untouched)
            let again = try await current.rekey(codec: codec)
            #expect(again.rewritten == 0 && again.total == 7)
            await client.close()
        }
    }

    @Test func aRecordThatDoesNotOpenStopsTheRunBeforeAnythingIsWritten() async throws {
        try await SharedPostgresServer.withDatabase { configuration in
            let client = try PostgresClient(configuration: configuration)
            _ = try await PostgresSchema.migrate(client)
            // Sealed with a key the keyring lacks: it cannot be opened, so nothing may be resealed.
            let stranger = "c:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }).base64EncodedString()
            let plain = PostgresAccountRepository(client: client, codec: PlainJSONAccountCodec())
            try await plain.put(Account.make(uid: "rekey-plain"))
            let unknown = PostgresAccountRepository(
                client: client, codec: EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(stranger)))
            try await unknown.put(Account.make(uid: "rekey-stranger"))
            let codec = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB))
            await #expect(throws: StoreError.self) {
                _ = try await PostgresAccountRepository(client: client, codec: codec).rekey(codec: codec)
            }
            let bytes = try #require(
                try await client.query("SELECT record FROM accounts WHERE id = $1", [.text(Account.make(uid: "rekey-plain").id)]).rows
                    .first?.bytea(0))
            #expect(try codec.needsRekey(bytes, path: "plain"))
            await client.close()
        }
    }
}
