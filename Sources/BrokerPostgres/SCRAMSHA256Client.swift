import BrokerCrypto
import Foundation
import Synchronization

/// The client side of SCRAM-SHA-256 (RFC 5802 §3 and §5, RFC 7677) without channel binding, as PostgreSQL runs it.
///
/// Three steps: ``clientFirstMessage``, then ``clientFinalMessage(serverFirst:)`` with the server's challenge,
/// then ``verify(serverFinal:)``, which must succeed before the login is trusted: it proves the server knew
/// the password's verifier (RFC 5802 §3, ServerSignature). The password is used as its UTF-8 bytes; PostgreSQL
/// applies SASLprep, which leaves ASCII passwords as they are.
struct SCRAMSHA256Client {
    /// The largest iteration count accepted from a server: PostgreSQL's default is 4096; a hostile server must not be
    /// able to make the client spin for minutes.
    static let maximumIterations = 1_000_000

    private let password: [UInt8]
    /// Where SaltedPassword is kept per salt and iteration count, shared by a pool's connections.
    private let keys: SCRAMKeyCache?
    private let clientNonce: String
    /// `n=<user>,r=<nonce>`, part of the AuthMessage.
    private let clientFirstBare: String
    /// The ServerSignature expected in server-final, set by ``clientFinalMessage(serverFirst:)``.
    private var expectedServerSignature: [UInt8]?

    /// Starts an exchange for `user` (PostgreSQL ignores it and libpq sends it empty) with a fresh random nonce,
    /// or `nonce` in tests.
    init(user: String, password: [UInt8], nonce: String? = nil, keys: SCRAMKeyCache? = nil) {
        self.password = password
        self.keys = keys
        self.clientNonce = nonce ?? Base64.encode(SecureRandom.bytes(18))
        // RFC 5802 §5.1: `=` and `,` in the user name are written =3D and =2C.
        let escaped = user.replacingOccurrences(of: "=", with: "=3D").replacingOccurrences(of: ",", with: "=2C")
        self.clientFirstBare = "n=\(escaped),r=\(clientNonce)"
    }

    /// client-first-message: the GS2 header `n,,` (no channel binding, no authzid) and the bare part.
    var clientFirstMessage: [UInt8] { Array(("n,," + clientFirstBare).utf8) }

    /// Checks server-first-message and returns client-final-message with the proof.
    mutating func clientFinalMessage(serverFirst bytes: [UInt8]) throws(PostgresError) -> [UInt8] {
        let serverFirst = String(decoding: bytes, as: UTF8.self)
        let attributes = Self.attributes(serverFirst)
        // RFC 5802 §5.1: the combined nonce starts with the client's and adds the server's.
        guard let nonce = attributes["r"], nonce.hasPrefix(clientNonce), nonce.count > clientNonce.count else {
            throw .authenticationRefused("the server's SCRAM nonce does not extend the client's")
        }
        guard let saltText = attributes["s"], let salt = Base64.decode(saltText), !salt.isEmpty else {
            throw .authenticationRefused("the server's SCRAM salt is missing or not base64")
        }
        guard let iterationText = attributes["i"], let iterations = Int(iterationText), (1...Self.maximumIterations).contains(iterations)
        else {
            throw .authenticationRefused("the server's SCRAM iteration count is missing or outside 1 to \(Self.maximumIterations)")
        }
        // RFC 5802 §3: SaltedPassword := Hi(password, salt, i), Hi being PBKDF2 with HMAC.
        let saltedPassword =
            keys?.saltedPassword(salt: salt, iterations: iterations, password: password)
            ?? PBKDF2.sha256(password: password, salt: salt, iterations: iterations, length: 32)
        let clientKey = HMAC.sha256(key: saltedPassword, message: Array("Client Key".utf8))
        let storedKey = SHA256.hash(clientKey)
        // c=biws is base64("n,,"): the GS2 header with no channel binding.
        let clientFinalWithoutProof = "c=biws,r=\(nonce)"
        let authMessage = Array("\(clientFirstBare),\(serverFirst),\(clientFinalWithoutProof)".utf8)
        let clientSignature = HMAC.sha256(key: storedKey, message: authMessage)
        let proof = zip(clientKey, clientSignature).map { $0 ^ $1 }
        let serverKey = HMAC.sha256(key: saltedPassword, message: Array("Server Key".utf8))
        expectedServerSignature = HMAC.sha256(key: serverKey, message: authMessage)
        return Array("\(clientFinalWithoutProof),p=\(Base64.encode(proof))".utf8)
    }

    /// Checks server-final-message: `v=<ServerSignature>` equal in constant time, or `e=<error>`.
    func verify(serverFinal bytes: [UInt8]) throws(PostgresError) {
        let attributes = Self.attributes(String(decoding: bytes, as: UTF8.self))
        if let error = attributes["e"] { throw .authenticationRefused("the server ended SCRAM with an error: \(error)") }
        guard let expectedServerSignature, let text = attributes["v"], let signature = Base64.decode(text),
            ConstantTime.equals(signature, expectedServerSignature)
        else {
            throw .authenticationRefused("the server's SCRAM signature is wrong: it does not know this password's verifier")
        }
    }

    /// `k=value` attributes separated by commas; a value may itself hold `=` (base64).
    private static func attributes(_ message: String) -> [String: String] {
        var result: [String: String] = [:]
        for part in message.split(separator: ",") {
            guard let equals = part.firstIndex(of: "="), part.distance(from: part.startIndex, to: equals) == 1 else { continue }
            let key = String(part[..<equals])
            if result[key] == nil { result[key] = String(part[part.index(after: equals)...]) }
        }
        return result
    }
}

/// SaltedPassword per (salt, iterations), so a pool reopening many sessions at once (after a failover) derives
/// it once rather than once per session: PBKDF2 is deliberately slow.
///
/// It holds what the pool's password gives for this server's verifier, no more than the password itself, which
/// the configuration already keeps in memory. Bounded: a server changing salts cannot make it grow without end.
final class SCRAMKeyCache: Sendable {
    private struct Key: Hashable {
        let salt: [UInt8]
        let iterations: Int
    }

    private let entries = Mutex<[Key: [UInt8]]>([:])
    private let derivations = Atomic<Int>(0)

    /// The SaltedPassword for `salt` and `iterations`, derived on first use.
    func saltedPassword(salt: [UInt8], iterations: Int, password: [UInt8]) -> [UInt8] {
        let key = Key(salt: salt, iterations: iterations)
        if let known = entries.withLock({ $0[key] }) { return known }
        let derived = PBKDF2.sha256(password: password, salt: salt, iterations: iterations, length: 32)
        derivations.add(1, ordering: .relaxed)
        entries.withLock { entries in
            if entries.count >= 16 { entries.removeAll() }
            entries[key] = derived
        }
        return derived
    }

    /// How many times PBKDF2 ran.
    var derivationCount: Int { derivations.load(ordering: .relaxed) }
}
