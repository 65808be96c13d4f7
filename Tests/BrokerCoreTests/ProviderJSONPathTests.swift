import Foundation
import Testing

@testable import BrokerCore

/// JSON paths into provider answers, and the exact ids they may yield: strings and integers as written, nothing rounded.
struct ProviderJSONPathTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aPathReachesNestedMembersAndArrayElements() throws {
        let answer = try Self.json(#"{"authed_user":{"id":"U1"},"data":[{"gid":"7"}],"0":{"x":"member named 0"},"gone":null}"#)
        #expect(ProviderJSONPath("authed_user.id").value(in: answer) as? String == "U1")
        #expect(ProviderJSONPath("data.0.gid").value(in: answer) as? String == "7")
        #expect(ProviderJSONPath("0.x").value(in: answer) as? String == "member named 0")
        #expect(ProviderJSONPath("gone").value(in: answer) == nil)
        #expect(ProviderJSONPath("data.1.gid").value(in: answer) == nil)
        #expect(ProviderJSONPath("authed_user.id.more").value(in: answer) == nil)
        #expect(ProviderJSONPath("data.-1").value(in: answer) == nil)
        #expect(ProviderJSONPath("data.+0.gid").value(in: answer) == nil)
    }

    @Test(arguments: ["", ".", "a..b", ".a", "a.", "a b", "a/b", "é", "a.b.c.d.e.f.g.h.i", String(repeating: "x", count: 65)])
    func aMalformedPathIsNamedAsSuch(text: String) {
        #expect(ProviderJSONPath.problem(with: text) != nil)
    }

    @Test(arguments: ["id", "authed_user.id", "data.viewer.id", "owner.user.id", "a-b_c.0", "a.b.c.d.e.f.g.h"])
    func aPlainPathIsUsable(text: String) {
        #expect(ProviderJSONPath.problem(with: text) == nil)
        #expect(ProviderJSONPath(text).description == text)
    }

    @Test(arguments: [
        (#"{"v":"U1234"}"#, "U1234"), (#"{"v":134815}"#, "134815"), (#"{"v":-5}"#, "-5"),
        (#"{"v":9223372036854775807}"#, "9223372036854775807"), (#"{"v":9223372036854775808}"#, "9223372036854775808"),
        (#"{"v":"4242.0"}"#, "4242.0"),
    ])
    func anIDIsAStringOrAnIntegerAsWritten(answer: String, id: String) throws {
        #expect(ProviderJSONPath.userID(at: [ProviderJSONPath("v")], in: try Self.json(answer)) == id)
    }

    @Test(arguments: [
        #"{"v":4242.0}"#, #"{"v":1e3}"#, #"{"v":18446744073709551616}"#, #"{"v":123456789012345678901234}"#,
        #"{"v":true}"#, #"{"v":""}"#, #"{"v":{"id":1}}"#, #"{"v":[1]}"#, #"{"v":null}"#, "{}",
    ])
    func anythingElseIsNoID(answer: String) throws {
        #expect(ProviderJSONPath.userID(at: [ProviderJSONPath("v")], in: try Self.json(answer)) == nil)
    }

    @Test func severalPathsJoinWithAColonAndNoneMayHoldOne() throws {
        let paths = [ProviderJSONPath("team.id"), ProviderJSONPath("authed_user.id")]
        #expect(ProviderJSONPath.userID(at: paths, in: try Self.json(#"{"team":{"id":"T1"},"authed_user":{"id":"U1"}}"#)) == "T1:U1")
        #expect(ProviderJSONPath.userID(at: paths, in: try Self.json(#"{"team":{"id":"T1:U"},"authed_user":{"id":"1"}}"#)) == nil)
        #expect(ProviderJSONPath.userID(at: paths, in: try Self.json(#"{"team":null,"authed_user":{"id":"U1"}}"#)) == nil)
        // One path alone may name an id with a colon: there is nothing to confuse it with.
        #expect(ProviderJSONPath.userID(at: [ProviderJSONPath("id")], in: try Self.json(#"{"id":"dbid:AAH4"}"#)) == "dbid:AAH4")
        #expect(ProviderJSONPath.userID(at: [], in: try Self.json(#"{"id":"1"}"#)) == nil)
    }
}
