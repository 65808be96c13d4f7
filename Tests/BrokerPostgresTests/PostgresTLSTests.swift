import BrokerCore
import BrokerPostgres
import BrokerTestSupport
import Foundation
import Testing

/// TLS to a real PostgreSQL (`ssl=on` with a certificate from a test CA made by the `openssl` CLI): SSLRequest, the
/// handshake through the broker's TLS layer, and every check of `verify-full`.
@Suite(.scoped) struct PostgresTLSTests {
    /// A CA in a fresh directory and a server certificate from it for `subjectAltName`.
    private static func certificate(for subjectAltName: String) async throws -> (TestCertificateAuthority, TestCertificateAuthority.Issued)
    {
        let directory = NSTemporaryDirectory() + "/broker-pg-tls-" + UUID().uuidString
        TestScope.required("a certificate directory")?.onEnd { try? FileManager.default.removeItem(atPath: directory) }
        let authority = try await TestCertificateAuthority.make(in: directory)
        return (authority, try await authority.issue("postgres", subjectAltName: subjectAltName))
    }

    private static func configuration(_ server: PostgresServer, _ query: String) throws -> PostgresConfiguration {
        let base = server.configuration()
        var configuration = try PostgresConfiguration.parse("postgres://postgres@127.0.0.1:\(server.port)/postgres?\(query)")
        configuration.user = base.user
        configuration.password = base.password
        configuration.connectTimeout = base.connectTimeout
        configuration.statementTimeout = base.statementTimeout
        configuration.poolSize = 1
        return configuration
    }

    @Test func verifyFullWithTheCAConnectsOverTLSAndCancelsThroughIt() async throws {
        let (authority, issued) = try await Self.certificate(for: "IP:127.0.0.1")
        let server = try await PostgresServer.scoped(certificate: issued)
        let client = try PostgresClient(
            configuration: Self.configuration(server, "sslmode=verify-full&sslrootcert=\(authority.caFile)"))
        // The server says this session is encrypted, and answers statements with parameters through it.
        let ssl = try await client.query("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        #expect(ssl.rows.first?.string(0) == "t")
        #expect(ssl.rows.first?.string(1)?.hasPrefix("TLSv1.") == true)
        let echoed = try await client.query("SELECT $1::text", [.text(String(repeating: "é", count: 40_000))])
        #expect(echoed.rows.first?.string(0)?.count == 40_000)
        // A statement past its deadline is cancelled (the CancelRequest over its own TLS connection) and the
        // session stays usable.
        let pid = try await client.query("SELECT pg_backend_pid()").rows.first?.int(0)
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT pg_sleep(30)", timeout: 2) }
        #expect(error == .deadlineExceeded(cancelled: true))
        #expect(try await client.query("SELECT pg_backend_pid()").rows.first?.int(0) == pid)
        // An idle TLS session is reused, not reopened (a TLS 1.3 session ticket is not a stale session).
        let sessions = try await client.withConnection { (connection) async throws(PostgresError) in await connection.sessionCount() }
        #expect(sessions == 1)
        await client.close()
    }

    @Test func aCertificateFromAnUntrustedCAIsRefusedNamingTheCause() async throws {
        let (_, issued) = try await Self.certificate(for: "IP:127.0.0.1")
        let server = try await PostgresServer.scoped(certificate: issued)
        // No sslrootcert: the system's store does not know the test CA. `require` is checked as verify-full.
        for mode in ["verify-full", "require", "verify-ca"] {
            let client = try PostgresClient(configuration: Self.configuration(server, "sslmode=\(mode)"))
            let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1") }
            #expect("\(error.map { "\($0)" } ?? "")".contains("certificate"), "sslmode=\(mode): \(String(describing: error))")
            await client.close()
        }
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let (authority, issued) = try await Self.certificate(for: "DNS:db.example.internal")
        let server = try await PostgresServer.scoped(certificate: issued)
        let client = try PostgresClient(
            configuration: Self.configuration(server, "sslmode=verify-full&sslrootcert=\(authority.caFile)"))
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("not for this host"))
        await client.close()
    }

    @Test func aServerWithoutTLSIsRefusedNotUsedInPlainText() async throws {
        let (authority, _) = try await Self.certificate(for: "IP:127.0.0.1")
        let server = try await PostgresServer.scoped()
        let client = try PostgresClient(
            configuration: Self.configuration(server, "sslmode=verify-full&sslrootcert=\(authority.caFile)"))
        let error = await #expect(throws: PostgresError.self) { _ = try await client.query("SELECT 1") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("does not accept TLS"))
        await client.close()
        // The same server still serves a client that asks for no TLS.
        let plain = try PostgresClient(configuration: Self.configuration(server, "sslmode=disable"))
        #expect(try await plain.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").rows.first?.string(0) == "f")
        await plain.close()
    }

    @Test func unusableTLSFilesAreConfigurationErrorsBeforeAnyConnection() throws {
        let missing = "postgres://u:pw@127.0.0.1:1/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"
        #expect {
            _ = try PostgresClient(url: missing)
        } throws: { error in
            guard case .configuration(let message) = error as? PostgresError else { return false }
            return message.contains("sslrootcert") && !message.contains("pw")
        }
        #expect {
            _ = try PostgresClient(url: "postgres://u:pw@127.0.0.1:1/db?sslmode=verify-full&sslcert=/tmp/c.pem")
        } throws: { error in
            guard case .configuration(let message) = error as? PostgresError else { return false }
            return message.contains("sslcert and sslkey")
        }
    }
}
