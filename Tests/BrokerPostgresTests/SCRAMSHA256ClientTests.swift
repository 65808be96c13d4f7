import BrokerCrypto
import Testing

@testable import BrokerPostgres

/// The SCRAM-SHA-256 client against RFC 7677 §3's example exchange.
struct SCRAMSHA256ClientTests {
    private static let clientNonce = "rOprNGfwEbeRWgbNEkqO"
    private static let serverFirst = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"

    @Test("RFC 7677 §3: user `user`, password `pencil`: the client's messages and proof, and the server's signature accepted")
    func rfc7677() throws {
        var client = SCRAMSHA256Client(user: "user", password: Array("pencil".utf8), nonce: Self.clientNonce)
        #expect(String(decoding: client.clientFirstMessage, as: UTF8.self) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO")
        let final = try client.clientFinalMessage(serverFirst: Array(Self.serverFirst.utf8))
        #expect(
            String(decoding: final, as: UTF8.self)
                == "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
        try client.verify(serverFinal: Array("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=".utf8))
    }

    @Test("PostgreSQL's form with an empty user name (`n=`, as libpq sends) gives the recomputed proof and signature")
    func emptyUserName() throws {
        var client = SCRAMSHA256Client(user: "", password: Array("pencil".utf8), nonce: Self.clientNonce)
        let final = try client.clientFinalMessage(serverFirst: Array(Self.serverFirst.utf8))
        #expect(String(decoding: final, as: UTF8.self).hasSuffix(",p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k="))
        try client.verify(serverFinal: Array("v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=".utf8))
    }

    @Test("a server signature that is wrong, missing or an error is refused")
    func badServerFinal() throws {
        var client = SCRAMSHA256Client(user: "user", password: Array("pencil".utf8), nonce: Self.clientNonce)
        _ = try client.clientFinalMessage(serverFirst: Array(Self.serverFirst.utf8))
        for final in ["v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=", "", "e=invalid-proof", "v=not base64!"] {
            #expect(throws: PostgresError.self) { try client.verify(serverFinal: Array(final.utf8)) }
        }
    }

    @Test(
        "a server-first that does not extend the nonce, lacks a salt, or asks for too many iterations is refused",
        arguments: [
            "r=someoneElsesNonce123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
            "r=rOprNGfwEbeRWgbNEkqOabc,i=4096",
            "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0",
            "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999",
            "r=rOprNGfwEbeRWgbNEkqOabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1",
        ])
    func badServerFirst(serverFirst: String) {
        var client = SCRAMSHA256Client(user: "", password: Array("pencil".utf8), nonce: Self.clientNonce)
        #expect(throws: PostgresError.self) { _ = try client.clientFinalMessage(serverFirst: Array(serverFirst.utf8)) }
    }
}
