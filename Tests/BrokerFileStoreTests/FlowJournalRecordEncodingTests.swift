import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The flow journal's lines, now written byte by byte, are the bytes the `JSONEncoder` of earlier versions wrote, and
/// decode to the same records.
struct FlowJournalRecordEncodingTests {
    /// A line as earlier versions wrote it: the line's Codable shape through `JSONEncoder`, sorted keys, slashes as they are.
    static func previousLine(_ line: FlowJournalRecord.Line) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8](try encoder.encode(line)) + [0x0A]
    }

    /// Every character below U+0080, then some beyond (two-, three- and four-byte UTF-8, U+2028).
    static let awkward = String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init))) + "é€😀\u{2028}/\\\""

    static let puts: [PendingFlowJSON] = [
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "github", binding: "b1", codeVerifier: "sealed:v1:abc",
            requestToken: nil, requestTokenSecret: nil, returnTo: nil, createdAt: "2026-01-01T00:00:00Z",
            expiresAt: "2026-01-01T00:10:00Z"),
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "twitter", binding: "api", codeVerifier: nil,
            requestToken: "rt/1", requestTokenSecret: "s\"e\\c", returnTo: "https://app.example/cb?a=1&b=/x",
            nonce: "n-1", endUserID: "user 7", endUserEmail: "a@b.example", endUserName: awkward,
            tags: ["plan": "pro", "team": "a/b", "a": "é"],
            createdAt: "2026-01-01T00:00:00.250Z", expiresAt: "2026-01-01T00:10:00.250Z"),
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: awkward, binding: awkward, codeVerifier: awkward,
            requestToken: awkward, requestTokenSecret: awkward, returnTo: awkward, nonce: awkward, endUserID: awkward,
            endUserEmail: awkward, endUserName: awkward, tags: [:], createdAt: awkward, expiresAt: awkward),
        // A device sign-in with its sealed device code and next poll.
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "github", binding: "api", codeVerifier: nil,
            requestToken: nil, requestTokenSecret: nil, returnTo: nil, endUserID: "u", tags: ["a": "b"],
            device: DeviceJSON(deviceCode: "sealed:v1:k:n:c\"t", interval: 10, nextPollAt: "2026-01-01T00:00:15Z"),
            createdAt: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:15:00Z"),
        // Connect sessions: the session, and a flow started from one with every member.
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "", binding: "connect-session", codeVerifier: nil,
            requestToken: nil, requestTokenSecret: nil, returnTo: nil, endUserID: "u",
            connect: ConnectJSON(ConnectContext(stage: .session, origin: "https://app.example")),
            createdAt: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:30:00Z"),
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "acme", binding: "b1", codeVerifier: "v", requestToken: nil,
            requestTokenSecret: nil, returnTo: "https://app.example/done", tags: ["plan": "pro"],
            connect: ConnectJSON(
                ConnectContext(
                    stage: .flow, origin: awkward, allowedProviders: ["acme", awkward], reconnectAccountID: "acme:1",
                    scopes: ["read", "a/b"])),
            createdAt: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:30:00Z"),
        // A step-up flow (issue 34): its own scopes and the account it upgrades.
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "acme", binding: "api", codeVerifier: "v", requestToken: nil,
            requestTokenSecret: nil, returnTo: nil, scopes: ["read", "write", awkward], stepUp: "acme:4/2",
            createdAt: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:30:00Z"),
        // A flow with per-account settings.
        PendingFlowJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "zendesk", binding: "b1", codeVerifier: "v", requestToken: nil,
            requestTokenSecret: nil, returnTo: nil, scopes: ["read"], settings: ["subdomain": "acme", "region": awkward],
            createdAt: "2026-01-01T00:00:00Z", expiresAt: "2026-01-01T00:30:00Z"),
    ]

    static let outcomes: [FlowOutcomeJSON] = [
        FlowOutcomeJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "github", status: "pending", account: nil, endUserID: nil,
            error: nil, expiresAt: "2026-01-01T00:10:00Z", endedAt: nil, keepUntil: "2026-01-01T00:20:00Z"),
        FlowOutcomeJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "github", status: "completed", account: "github:42",
            endUserID: "user/7", error: "access_denied", expiresAt: "2026-01-01T00:10:00Z", endedAt: "2026-01-01T00:00:30Z",
            keepUntil: "2026-01-01T00:20:00Z"),
        FlowOutcomeJSON(
            version: 1, state: awkward, provider: awkward, status: awkward, account: awkward, endUserID: awkward, error: awkward,
            expiresAt: awkward, endedAt: awkward, keepUntil: awkward),
        FlowOutcomeJSON(
            version: 1, state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "acme", status: "completed", account: "acme:1", endUserID: "u",
            error: nil, tags: ["team": "a", "plan": awkward], expiresAt: "2026-01-01T00:10:00Z", endedAt: nil,
            keepUntil: "2026-01-01T00:20:00Z"),
    ]

    @Test(arguments: puts.indices) func aPutLineIsTheBytesThePreviousEncoderWrote(_ index: Int) throws {
        let record = Self.puts[index]
        let line = FlowJournalRecord.encodePut(record)
        let previous = try Self.previousLine(FlowJournalRecord.Line(put: record, take: nil, outcome: nil))
        #expect(String(decoding: line, as: UTF8.self) == String(decoding: previous, as: UTF8.self))
        #expect(line == previous)
        let decoded = try JSONDecoder().decode(FlowJournalRecord.Line.self, from: Data(line.dropLast()))
        #expect(decoded.put == record && decoded.take == nil && decoded.outcome == nil)
    }

    @Test(arguments: outcomes.indices) func anOutcomeLineIsTheBytesThePreviousEncoderWrote(_ index: Int) throws {
        let record = Self.outcomes[index]
        let line = FlowJournalRecord.encodeOutcome(record)
        let previous = try Self.previousLine(FlowJournalRecord.Line(put: nil, take: nil, outcome: record))
        #expect(String(decoding: line, as: UTF8.self) == String(decoding: previous, as: UTF8.self))
        #expect(line == previous)
        let decoded = try JSONDecoder().decode(FlowJournalRecord.Line.self, from: Data(line.dropLast()))
        #expect(decoded.outcome == record && decoded.put == nil && decoded.take == nil)
    }

    /// Tags whose names sort differently by bytes and by other orders still read back as the same tags.
    @Test func tagsInAnyOrderReadBackTheSame() throws {
        var record = Self.puts[0]
        record.tags = ["B": "1", "a": "2", "10": "3", "9": "4", "é": "5", "E": "6", "_": "7"]
        let line = FlowJournalRecord.encodePut(record)
        let decoded = try JSONDecoder().decode(FlowJournalRecord.Line.self, from: Data(line.dropLast()))
        #expect(decoded.put == record)
        #expect(FlowJournalRecord.decode(line.dropLast()) == .put(record))
    }
}
