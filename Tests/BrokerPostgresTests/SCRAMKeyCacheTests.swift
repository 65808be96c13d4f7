import BrokerTestSupport
import Testing

@testable import BrokerPostgres

/// A pool's sessions share one PBKDF2 derivation per salt: reopening every session (after a failover) costs one.
@Suite(.scoped) struct SCRAMKeyCacheTests {
    @Test func everySessionOfAPoolLogsInWithOneDerivation() async throws {
        let server = try await PostgresServer.scoped()
        let client = try server.client(poolSize: 3)
        for connection in client.pool.connections {
            _ = try await connection.query("SELECT 1")
            #expect(await connection.sessionCount() == 1)
        }
        #expect(client.pool.scramKeys.derivationCount == 1)
    }

    @Test func theCachedKeyGivesTheSameProofAsADerivation() throws {
        let serverFirst = Array("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096".utf8)
        let keys = SCRAMKeyCache()
        for _ in 0..<2 {
            var client = SCRAMSHA256Client(user: "user", password: Array("pencil".utf8), nonce: "rOprNGfwEbeRWgbNEkqO", keys: keys)
            let final = try client.clientFinalMessage(serverFirst: serverFirst)
            #expect(String(decoding: final, as: UTF8.self).hasSuffix("p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="))
        }
        #expect(keys.derivationCount == 1)
    }
}
