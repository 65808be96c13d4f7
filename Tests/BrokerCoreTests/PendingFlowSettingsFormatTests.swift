import Foundation
import Testing

@testable import BrokerCore

/// A flow's per-account settings in the stored record every back end writes (``PendingFlowCodec``): an optional
/// `settings` member, so a record written before it existed reads with none and still completes.
struct PendingFlowSettingsFormatTests {
    @Test func aRecordWrittenBeforeSettingsReadsWithNone() throws {
        let old = #"""
            {"binding":"api","code_verifier":"verifier-0123456789","created_at":"2026-01-01T00:00:00Z",
             "expires_at":"2026-01-01T00:10:00Z","provider":"acme","state":"c3RhdGUtMTIzNDU2Nzg5MA","version":1}
            """#
        let flow = try PendingFlowCodec.decode(Array(old.utf8), path: "old")
        #expect(flow.settings.isEmpty && flow.provider == "acme" && flow.codeVerifier?.value == "verifier-0123456789")
    }

    @Test func settingsAreWrittenOnlyWhenGivenAndReadBack() throws {
        var flow = PendingFlow(
            state: "c3RhdGUtMTIzNDU2Nzg5MA", provider: "acme", binding: "api", createdAt: .init(timeIntervalSince1970: 0),
            expiresAt: .init(timeIntervalSince1970: 600))
        #expect(!String(decoding: try PendingFlowCodec.encode(flow), as: UTF8.self).contains("settings"))
        flow.settings = ["subdomain": "acme"]
        let bytes = try PendingFlowCodec.encode(flow)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""settings""#))
        #expect(try PendingFlowCodec.decode(bytes, path: "new") == flow)
    }
}
