import BrokerCore
import BrokerCrypto
import Testing

/// Building and splitting `provider:uid`, byte for byte.
struct AccountIDTests {
    /// The UTF-8 bytes of `text`.
    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test(arguments: [
        ("github", "1001"), ("spotify", "abc:def"), ("weibo", ":"), ("x", "::a::"), ("google", "caf\u{E9}"),
        ("google", "cafe\u{301}"), ("twitter", "\u{301}leading-mark"), ("github", "a/b c+d%3A"), ("tmdb", "\u{1F642}"),
    ])
    func buildsProviderColonUIDAndSplitsItBack(provider: String, uid: String) throws {
        let id = AccountID(provider: provider, uid: uid)
        #expect(Self.bytes(id.string) == Self.bytes(provider) + [UInt8(ascii: ":")] + Self.bytes(uid))
        let parsed = try #require(AccountID(id.string))
        #expect(parsed == id)
        #expect(Self.bytes(parsed.provider) == Self.bytes(provider))
        #expect(Self.bytes(parsed.uid) == Self.bytes(uid))
        #expect(Self.bytes(parsed.string) == Self.bytes(id.string))
        #expect(id.description == id.string)
    }

    @Test func accountIDIsBuiltHere() {
        let account = Account.make(provider: "spotify", uid: "abc:def")
        #expect(Self.bytes(account.id) == Self.bytes(AccountID(provider: "spotify", uid: "abc:def").string))
    }

    @Test func theFirstColonSeparatesSoAUIDKeepsItsOwn() throws {
        let parsed = try #require(AccountID("spotify:abc:def"))
        #expect(parsed.provider == "spotify")
        #expect(parsed.uid == "abc:def")
        // A provider name cannot contain ':'; one that did would split at its own colon.
        let odd = AccountID(provider: "a:b", uid: "c")
        #expect(odd.string == "a:b:c")
        #expect(AccountID(odd.string) == AccountID(provider: "a", uid: "b:c"))
    }

    @Test func emptyPartsAreKeptAndAnIDWithoutAColonIsNone() throws {
        #expect(AccountID(":") == AccountID(provider: "", uid: ""))
        #expect(AccountID("github:") == AccountID(provider: "github", uid: ""))
        #expect(AccountID(":1001") == AccountID(provider: "", uid: "1001"))
        #expect(AccountID(provider: "", uid: "").string == ":")
        // Through a `String` value: `AccountID("github")` with a literal is the literal initializer (SE-0213), which traps.
        for noColon in ["", "github"] as [String] { #expect(AccountID(noColon) == nil) }
    }

    @Test func aColonThatACombiningMarkFollowsStillSplits() throws {
        let id = "github:\u{301}x"
        // Swift's Character view sees ":" + U+0301 as one Character, which is not ":".
        #expect(id.firstIndex(of: ":") == nil)
        let parsed = try #require(AccountID(id))
        #expect(parsed.provider == "github")
        #expect(Self.bytes(parsed.uid) == [0xCC, 0x81, UInt8(ascii: "x")])
    }

    @Test func canonicallyEquivalentUIDsAreDifferentIDs() {
        let composed = AccountID(provider: "github", uid: "caf\u{E9}")
        let decomposed = AccountID(provider: "github", uid: "cafe\u{301}")
        let kelvin = AccountID(provider: "github", uid: "\u{212A}ay")
        #expect(composed.string == decomposed.string)  // String equality is canonical equivalence
        #expect(composed != decomposed)
        #expect(kelvin != AccountID(provider: "github", uid: "Kay"))
        #expect(Set([composed, decomposed, kelvin, AccountID(provider: "github", uid: "Kay")]).count == 4)
        #expect(AccountID(decomposed.string) == decomposed)
    }

    @Test func percentEncodedFormsAsURLsCarryThemDecodeToTheSameID() throws {
        let id = AccountID(provider: "github", uid: "caf\u{E9}:/ a+b%?&=#")
        // The callback's `account=` parameter and the session cookie carry the id percent-encoded this way.
        let encoded = PercentEncoding.rfc3986(id.string)
        #expect(encoded == "github%3Acaf%C3%A9%3A%2F%20a%2Bb%25%3F%26%3D%23")
        // A query's `id=` is decoded leniently; the id that comes back has the same bytes and parts.
        let decoded = PercentEncoding.formDecodeLeniently(encoded.utf8)
        #expect(Self.bytes(decoded) == Self.bytes(id.string))
        #expect(AccountID(decoded) == id)
        // An encoded colon and lower-case hex name the same account; a form's '+' is a space.
        #expect(AccountID(PercentEncoding.formDecodeLeniently("github%3a1001".utf8)) == AccountID(provider: "github", uid: "1001"))
        #expect(AccountID(PercentEncoding.formDecodeLeniently("github:a+b".utf8)) == AccountID(provider: "github", uid: "a b"))
    }

    @Test func bytesThatAreNotUTF8NeverNameAnAccountWithThoseBytes() throws {
        // Leniently, as for a query or a cookie, invalid UTF-8 becomes U+FFFD: a different uid, not the raw bytes.
        let lenient = PercentEncoding.formDecodeLeniently("github%3A%FF%C3x".utf8)
        let parsed = try #require(AccountID(lenient))
        #expect(parsed.provider == "github")
        #expect(parsed.uid == "\u{FFFD}\u{FFFD}x")
        #expect(AccountID(parsed.string) == parsed)
        // Strictly, the value is refused and no id is made at all.
        #expect(PercentEncoding.formDecode("github%3A%FF%C3x") == nil)
    }
}
