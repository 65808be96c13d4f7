import BrokerCore
import BrokerTLS
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerRedis

/// `rediss://` against a real `redis-server` that speaks only TLS, with certificates from a test CA.
struct RedisTLSTests {
    /// The reason a client's first command failed, or nil when it did not fail with ``RedisError/unavailable(_:)``.
    private func refusal(_ client: RedisClient) async -> String? {
        do {
            _ = try await client.command("PING")
            return nil
        } catch {
            guard case .unavailable(let reason) = error else { return nil }
            return reason
        }
    }

    @Test func aVerifiedServerCarriesCommandsLargeValuesAndPipelinesOnOneConnection() async throws {
        try await RedisServer.withTLS(password: "SENTINEL-tls") { server, tls async throws in
            let client = RedisClient(url: server.tlsURL(settings: tls.client, password: "SENTINEL-tls"), poolSize: 1, timeout: 30)
            #expect(try await client.command("SET", "greeting", "hello") == .simpleString("OK"))
            #expect(try await client.command("GET", "greeting").string == "hello")
            // Larger than a TLS record (16 KiB) and than the connection's 64 KiB read buffer, both ways.
            let value = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            #expect(try await client.command(RedisCommand(bytes: [Array("SET".utf8), Array("big".utf8), value])) == .simpleString("OK"))
            #expect(try await client.command(RedisCommand(bytes: [Array("GET".utf8), Array("big".utf8)])) == .bulk(value))
            let replies = try await client.pipeline((1...500).map { _ in ["INCR", "counter"] })
            #expect(replies == (1...500).map { RESPValue.integer($0) })
            // One handshake for all of it, and the idle connection between calls is not taken for a stale one.
            #expect(client.metrics.snapshot().connects == 1)
            #expect(try await client.command("GET", "counter").string == "500")
            #expect(client.metrics.snapshot().connects == 1)
        }
    }

    @Test func thePortDoesNotSpeakPlainRedis() async throws {
        try await RedisServer.withTLS { server, _ async throws in
            let plain = RedisClient(url: RedisURL(host: "127.0.0.1", port: server.port), poolSize: 1, timeout: 30)
            #expect(await refusal(plain) != nil)
        }
    }

    @Test func aServerCertificateTheClientDoesNotTrustIsRefusedNamingTheCause() async throws {
        try await RedisServer.withTLS { server, tls async throws in
            // The system's store alone does not know the test CA.
            var systemOnly = tls.client
            systemOnly.caFile = nil
            let reason = await refusal(RedisClient(url: server.tlsURL(settings: systemOnly), poolSize: 1, timeout: 30))
            #expect(
                reason?.contains("TLS with redis at localhost:\(server.port) failed: certificate:") == true, "\(reason ?? "no refusal")")
            // A CA file that holds another CA is no better.
            var otherCA = tls.client
            otherCA.caFile = tls.authority.otherCAFile
            let other = await refusal(RedisClient(url: server.tlsURL(settings: otherCA), poolSize: 1, timeout: 30))
            #expect(other?.contains("certificate:") == true, "\(other ?? "no refusal")")
        }
    }

    @Test func aCertificateForAnotherNameIsRefused() async throws {
        try await RedisServer.withTLS { server, tls async throws in
            // The certificate names localhost only; 127.0.0.1 is the same server but not the name it proves.
            let reason = await refusal(RedisClient(url: server.tlsURL(host: "127.0.0.1", settings: tls.client), poolSize: 1, timeout: 30))
            #expect(reason?.contains("the certificate is not for this host") == true, "\(reason ?? "no refusal")")
        }
    }

    @Test func aServerThatRequiresAClientCertificateServesOnlyOneFromItsCA() async throws {
        try await RedisServer.withTLS { server, tls async throws in
            var anonymous = tls.client
            anonymous.clientCertificate = nil
            #expect(await refusal(RedisClient(url: server.tlsURL(settings: anonymous), poolSize: 1, timeout: 30)) != nil)

            let stranger = try await tls.authority.issue("stranger", subjectAltName: "DNS:stranger", client: true, byOtherCA: true)
            var strange = tls.client
            strange.clientCertificate = TLSContext.ClientCertificate(certificateFile: stranger.certificateFile, keyFile: stranger.keyFile)
            #expect(await refusal(RedisClient(url: server.tlsURL(settings: strange), poolSize: 1, timeout: 30)) != nil)

            let trusted = RedisClient(url: server.tlsURL(settings: tls.client), poolSize: 1, timeout: 30)
            #expect(try await trusted.command("PING") == .simpleString("PONG"))
        }
    }

    @Test func aServerThatAsksForNoClientCertificateServesAClientWithout() async throws {
        try await RedisServer.withTLS(requireClientCertificate: false) { server, tls async throws in
            var anonymous = tls.client
            anonymous.clientCertificate = nil
            let client = RedisClient(url: server.tlsURL(settings: anonymous), poolSize: 1, timeout: 30)
            #expect(try await client.command("PING") == .simpleString("PONG"))
        }
    }

    @Test func aClientCertificateThatDoesNotMatchItsKeyIsRefusedBeforeAnyConnection() async throws {
        try await TemporaryDirectory.with { directory async throws in
            let authority = try await TestCertificateAuthority.make(in: directory)
            let one = try await authority.issue("one", subjectAltName: "DNS:one", client: true)
            let two = try await authority.issue("two", subjectAltName: "DNS:two", client: true)
            let mismatched = TLSContext.ClientCertificate(certificateFile: one.certificateFile, keyFile: two.keyFile)
            let error = #expect(throws: TLSError.self) { try RedisTLS(caFile: authority.caFile, clientCertificate: mismatched).context() }
            guard case .clientCertificate = error else {
                Issue.record("expected a client certificate error, got \(String(describing: error))")
                return
            }
            let missing = TLSContext.ClientCertificate(certificateFile: directory + "/none.pem", keyFile: two.keyFile)
            let unreadable = #expect(throws: TLSError.self) { try RedisTLS(clientCertificate: missing).context() }
            #expect(unreadable?.reason.contains("none.pem cannot be read") == true)
        }
    }

    @Test func aServerRestartIsFollowedByANewHandshake() async throws {
        try await RedisServer.withTLS { server, tls async throws in
            let client = RedisClient(url: server.tlsURL(settings: tls.client), poolSize: 1, timeout: 30)
            #expect(try await client.command("SET", "k", "v") == .simpleString("OK"))
            await server.kill()
            try await server.restart()
            // The idle session's socket was closed by the dead server: the stale check sees it and hands over a new handshake.
            #expect(try await client.command("PING") == .simpleString("PONG"))
            #expect(client.metrics.snapshot().connects == 2)
        }
    }
}
