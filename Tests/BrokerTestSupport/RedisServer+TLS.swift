import BrokerRedis
import BrokerTLS
import Foundation

/// The certificates of a TLS test server: the authority that issued them, and client settings that trust it.
public struct RedisTLSFixture: Sendable {
    /// The test CA, which can issue more certificates (another client's, one for another host).
    public let authority: TestCertificateAuthority
    /// Trusts the test CA and shows a client certificate it issued.
    public let client: RedisTLS
}

extension RedisServer {
    /// Runs `body` with a fresh TLS-only server, whose certificate names `localhost` (not `127.0.0.1`) and which
    /// requires a client certificate unless told otherwise, and with client settings that trust its CA and show a
    /// certificate from it; then stops the server and removes the certificates, whether `body` throws or not.
    public static func withTLS<T>(
        password: String? = nil, requireClientCertificate: Bool = true, _ body: (RedisServer, RedisTLSFixture) async throws -> T
    ) async throws -> T {
        try await TemporaryDirectory.with { directory in
            let authority = try await TestCertificateAuthority.make(in: directory)
            let certificate = try await authority.issue("redis", subjectAltName: "DNS:localhost")
            let clientCertificate = try await authority.issue("broker", subjectAltName: "DNS:broker", client: true)
            let server = try await start(
                password: password,
                tls: TLS(certificate: certificate, caFile: authority.caFile, requireClientCertificate: requireClientCertificate))
            let fixture = RedisTLSFixture(
                authority: authority,
                client: RedisTLS(
                    caFile: authority.caFile,
                    clientCertificate: TLSContext.ClientCertificate(
                        certificateFile: clientCertificate.certificateFile, keyFile: clientCertificate.keyFile)))
            do {
                let result = try await body(server, fixture)
                await server.stop()
                return result
            } catch {
                await server.stop()
                throw error
            }
        }
    }
}
