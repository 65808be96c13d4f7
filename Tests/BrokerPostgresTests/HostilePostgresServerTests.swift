import BrokerCore
import BrokerPostgres
import Testing

/// The client against servers that break the protocol or try to skip the login's proof: typed errors, no trap,
/// no allocation of what a length claims.
struct HostilePostgresServerTests {
    private static func client(port: Int) throws -> PostgresClient {
        try PostgresClient(
            configuration: PostgresConfiguration(
                endpoints: [.init(host: "127.0.0.1", port: port)], user: "u", password: Secret("pw"), connectTimeout: 30,
                statementTimeout: 60, poolSize: 1))
    }

    private static let sasl = ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(10) + Array("SCRAM-SHA-256\u{0}\u{0}".utf8))
    private static let ok = ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(0))

    @Test func aMessageClaimingTwoGigabytesIsAProtocolError() async throws {
        let server = try ScriptedPostgresServer(steps: [[UInt8(ascii: "R"), 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]])
        defer { server.close() }
        let error = await #expect(throws: PostgresError.self) { _ = try await Self.client(port: server.port).query("SELECT 1") }
        guard case .unavailable(let message)? = error else {
            Issue.record("expected unavailable naming a protocol error, got \(String(describing: error))")
            return
        }
        #expect(message.contains("cap"))
    }

    @Test func authenticationOkWithoutTheServersSCRAMProofIsRefused() async throws {
        // SASL offered, then Ok right after the client's first message: a server that never proved it knows the verifier.
        let server = try ScriptedPostgresServer(steps: [Self.sasl, Self.ok])
        defer { server.close() }
        let error = await #expect(throws: PostgresError.self) { _ = try await Self.client(port: server.port).query("SELECT 1") }
        guard case .authenticationRefused? = error else {
            Issue.record("expected authenticationRefused, got \(String(describing: error))")
            return
        }
    }

    @Test func aServerOfferingOnlyOtherMechanismsOrKerberosIsRefused() async throws {
        for step in [
            ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(10) + Array("SCRAM-SHA-256-PLUS\u{0}\u{0}".utf8)),
            ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(7)),
            ScriptedPostgresServer.message("R", ScriptedPostgresServer.int32(3)),
        ] {
            let server = try ScriptedPostgresServer(steps: [step])
            defer { server.close() }
            let error = await #expect(throws: PostgresError.self) { _ = try await Self.client(port: server.port).query("SELECT 1") }
            guard case .authenticationRefused? = error else {
                Issue.record("expected authenticationRefused, got \(String(describing: error))")
                continue
            }
        }
    }
}
