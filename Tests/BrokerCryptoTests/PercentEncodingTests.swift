import Testing

@testable import BrokerCrypto

/// RFC 5849 §3.6 encoding and form decoding as providers' bodies and queries need them.
struct PercentEncodingTests {
    @Test(
        "RFC 5849 §3.6 / RFC 3986 examples",
        arguments: [
            ("☃", "%E2%98%83"),
            ("*", "%2A"),
            (" ", "%20"),
            ("~", "~"),
            ("+", "%2B"),
            ("AZaz09-._~", "AZaz09-._~"),
            ("Hello Ladies + Gentlemen, a signed OAuth request!", "Hello%20Ladies%20%2B%20Gentlemen%2C%20a%20signed%20OAuth%20request%21"),
            ("Dogs, Cats & Mice", "Dogs%2C%20Cats%20%26%20Mice"),
            ("é", "%C3%A9"),
            ("", ""),
        ])
    func rfc3986(plain: String, encoded: String) {
        #expect(PercentEncoding.rfc3986(plain) == encoded)
    }

    @Test("every ASCII byte outside the unreserved set becomes %XX in uppercase")
    func everyASCIIByte() {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        for byte in UInt8(0)...UInt8(127) {
            let text = String(decoding: [byte], as: UTF8.self)
            let encoded = PercentEncoding.rfc3986(text)
            if unreserved.contains(byte) {
                #expect(encoded == text)
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                #expect(encoded == "%" + (hex.count == 1 ? "0" + hex : hex))
            }
        }
    }

    @Test(
        "form decoding",
        arguments: [
            ("a+b", "a b"),
            ("a%20b", "a b"),
            ("a%2Bb", "a+b"),
            ("%E2%98%83", "☃"),
            ("%e2%98%83", "☃"),
            ("%3D%253D", "=%3D"),
            ("", ""),
            ("plain", "plain"),
        ])
    func formDecode(encoded: String, plain: String) {
        #expect(PercentEncoding.formDecode(encoded) == plain)
    }

    @Test("malformed escapes and invalid UTF-8 are rejected", arguments: ["%", "%2", "abc%", "%zz", "%G0", "%FF", "%C3", "%E2%98"])
    func formDecodeRejects(encoded: String) {
        #expect(PercentEncoding.formDecode(encoded) == nil)
    }

    @Test("decoding undoes encoding for text in many scripts")
    func roundTrip() {
        for text in ["setting up my twitter 私のさえずりを設定する", "a+b c&d=e", "☃ * ~ %41", "line\nbreak", "emoji 🙂"] {
            #expect(PercentEncoding.formDecode(PercentEncoding.rfc3986(text)) == text)
        }
    }

    @Test("a token response body parses into ordered pairs")
    func parseTokenResponse() {
        let body = "oauth_token=hh5s93j4hdidpola&oauth_token_secret=hdhd0244k9j7ao03&oauth_callback_confirmed=true"
        let pairs = PercentEncoding.parseForm(body)
        #expect(pairs.map(\.name) == ["oauth_token", "oauth_token_secret", "oauth_callback_confirmed"])
        #expect(pairs.map(\.value) == ["hh5s93j4hdidpola", "hdhd0244k9j7ao03", "true"])
    }

    @Test("repeats are kept, empty pairs skipped, missing '=' gives an empty value, only the first '=' splits")
    func parseFormEdges() {
        let pairs = PercentEncoding.parseForm("a3=a&&a3=2+q&c%40=&flag&&b5=%3D%253D&x=y=z&")
        #expect(pairs.map(\.name) == ["a3", "a3", "c@", "flag", "b5", "x"])
        #expect(pairs.map(\.value) == ["a", "2 q", "", "", "=%3D", "y=z"])
        #expect(PercentEncoding.parseForm("").isEmpty)
    }

    @Test("a pair that does not decode is dropped, the rest survive")
    func parseFormDropsMalformed() {
        let pairs = PercentEncoding.parseForm("a=1&b=%ZZ&c=3")
        #expect(pairs.map(\.name) == ["a", "c"])
    }

    @Test("header decoding keeps '+' as '+'")
    func percentDecodeWithoutPlus() {
        #expect(PercentEncoding.percentDecode("a+b%2B", plusIsSpace: false) == "a+b+")
    }

    @Test func strictAndLenientDecodingAreNamedChoices() {
        let text = "a=%ZZ&b=caf%C3%A9&c=%FF&d=1+2"
        #expect(PercentEncoding.parseForm(text, .strict).map(\.name) == ["b", "d"])
        let lenient = PercentEncoding.parseForm(text, .lenient)
        #expect(lenient.map(\.value) == ["%ZZ", "caf\u{E9}", "\u{FFFD}", "1 2"])
        #expect(PercentEncoding.formDecodeLeniently(Array("%4".utf8)) == "%4")
        #expect(PercentEncoding.encodeForm([("a b", "x&y")]) == "a%20b=x%26y")
    }
}
