import BrokerCore
import Foundation
import Testing

/// Granted scopes read from stored records and checked on entry (issue 34).
struct GrantedScopesTests {
    /// A record as the previous version wrote it: no `scope` at all.
    static let oldRecord = """
        {
          "access_token" : "gho_SENTINEL",
          "created_at" : "2026-11-30T08:00:00Z",
          "id" : "github:1",
          "provider" : "github",
          "status" : "active",
          "uid" : "1",
          "updated_at" : "2026-11-30T08:00:00Z",
          "version" : 1
        }
        """

    @Test func aRecordOfTheEarlierVersionReadsWithScopesUnknown() throws {
        let account = try PlainJSONAccountCodec().decode(Array(Self.oldRecord.utf8), path: "old.json")
        #expect(account.id == "github:1")
        #expect(account.scope == nil)
        #expect(account.grantedScopes == nil)
        // Asked for anything, an unknown grant lacks it: a read with scopes steps up.
        #expect(Scopes.missing(["read"], from: account.grantedScopes ?? []) == ["read"])
    }

    @Test func aStoredScopeSplitsAtSpacesAndCommas() throws {
        let record = Self.oldRecord.replacingOccurrences(of: "\"status\"", with: "\"scope\" : \"repo,gist user  repo\",\n  \"status\"")
        let account = try PlainJSONAccountCodec().decode(Array(record.utf8), path: "new.json")
        #expect(account.grantedScopes == ["repo", "gist", "user"])
    }

    @Test func aPendingFlowOfTheEarlierVersionReadsWithoutScopes() throws {
        let old = """
            {"binding":"api","created_at":"2026-11-30T08:00:00Z","expires_at":"2026-11-30T08:10:00Z","provider":"acme",\
            "state":"c3RhdGUtc3RhdGUtc3RhdGUtc3RhdGUtc3RhdGUtc3RhdA","version":1}
            """
        let flow = try PendingFlowCodec.decode(Array(old.utf8), path: "flow.json")
        #expect(flow.scopes == nil)
        #expect(flow.stepUpAccountID == nil)
        var upgraded = flow
        upgraded.scopes = ["read", "write"]
        upgraded.stepUpAccountID = "acme:1"
        #expect(try PendingFlowCodec.decode(PendingFlowCodec.encode(upgraded), path: "flow.json") == upgraded)
    }

    @Test func scopesOnEntryFollowTheScopeTokenSyntax() throws {
        #expect(try Scopes.validated(text: "read,write read") == ["read", "write"])
        #expect(try Scopes.validated(["https://www.googleapis.com/auth/drive"]) == ["https://www.googleapis.com/auth/drive"])
        for bad in [[""], ["a b"], ["a\"b"], ["a\\b"], ["a,b"], ["é"], [String(repeating: "a", count: 257)], []] {
            #expect(throws: BrokerError.self) { try Scopes.validated(bad) }
        }
        #expect(throws: BrokerError.self) { try Scopes.validated((0..<65).map { "s\($0)" }) }
        #expect(Scopes.union(["read"], ["write", "read"]) == ["read", "write"])
    }
}
