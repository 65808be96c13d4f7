import BrokerCore
import Testing

/// The API proxy's outbound URL: the provider's base joined with the caller's path and query, or a refusal.
struct ProxyTargetTests {
    static let base = "https://api.example.com/v1"

    /// Caller paths and queries that are joined, with the URL they make.
    static let accepted: [(path: String, query: String?, url: String)] = [
        ("/user", nil, "https://api.example.com/v1/user"),
        ("/", nil, "https://api.example.com/v1/"),
        ("/repos/o/r/issues/", "state=open&per_page=100", "https://api.example.com/v1/repos/o/r/issues/?state=open&per_page=100"),
        ("/files/a.b..c", "q=a/b?c", "https://api.example.com/v1/files/a.b..c?q=a/b?c"),
        ("/users/me%40example.com", "", "https://api.example.com/v1/users/me%40example.com"),
        ("/name%20with%25percent", "x=%E2%9C%93", "https://api.example.com/v1/name%20with%25percent?x=%E2%9C%93"),
        ("/.well-known/x", nil, "https://api.example.com/v1/.well-known/x"),
        ("/a:b/c;d=e/!$&'()*+,~_-", nil, "https://api.example.com/v1/a:b/c;d=e/!$&'()*+,~_-"),
    ]

    /// Caller paths and queries that are refused, each with why it is dangerous.
    static let refused: [(path: String, query: String?)] = [
        ("https://evil.example/x", nil),  // absolute URL
        ("//evil.example/x", nil),  // scheme-relative
        ("evil.example/x", nil),  // no leading slash
        ("", nil),
        ("/a/../b", nil), ("/..", nil), ("/a/.", nil), ("/./a", nil),
        ("/%2e%2e/admin", nil), ("/%2E%2E/admin", nil), ("/%2E./admin", nil), (".%2e", nil), ("/.%2E/admin", nil),
        ("/%2e/admin", nil), ("/%252e%252e/admin", nil),
        ("/a%2fb", nil), ("/a%2Fb", nil), ("/a%5cb", nil), ("/a%5Cb", nil), ("/a\\b", nil), ("/a%252fb", nil),
        ("/@evil.example", nil), ("/x", "next=@evil.example"),
        ("/a//b", nil), ("/a\nb", nil), ("/a%0d%0aHost:%20evil", nil), ("/a%00", nil), ("/a%7f", nil), ("/a\u{7f}", nil),
        ("/a b", nil), ("/a#frag", nil), ("/a?x=1", nil), ("/caf\u{e9}", nil), ("/a%", nil), ("/a%2", nil), ("/a%zz", nil),
        ("/x", "a=1#frag"), ("/x", "a=\r\n"), ("/x", "a=%0a"), ("/x", "a b"), ("/x", "a=\\"), ("/x", "a=%5c"),
    ]

    @Test("Accepted", arguments: accepted)
    func accepts(path: String, query: String?, url: String) throws {
        let base = try ProxyTarget.Base(Self.base)
        #expect(try ProxyTarget.url(base: base, path: path, query: query) == url)
    }

    @Test("Refused", arguments: refused)
    func refuses(path: String, query: String?) throws {
        let base = try ProxyTarget.Base(Self.base)
        #expect(throws: ProxyTarget.Failure.self, "\(path) ? \(query ?? "")") {
            try ProxyTarget.url(base: base, path: path, query: query)
        }
    }

    @Test func theRefusalNeverRepeatsTheInput() throws {
        let base = try ProxyTarget.Base(Self.base)
        do {
            _ = try ProxyTarget.url(base: base, path: "/a/../secret-token-123", query: nil)
            Issue.record("joined")
        } catch {
            #expect(!"\(error)".contains("secret-token-123"))
        }
    }

    /// Bases as configured, with the origin and prefix they give.
    static let bases: [(url: String, origin: String, prefix: String)] = [
        ("https://api.github.com", "https://api.github.com", ""),
        ("https://api.github.com/", "https://api.github.com", ""),
        ("HTTPS://API.Example.COM:8443/v2/", "https://api.example.com:8443", "/v2"),
        ("https://graph.microsoft.com/v1.0", "https://graph.microsoft.com", "/v1.0"),
        ("https://[2001:db8::1]:443/api", "https://[2001:db8::1]:443", "/api"),
    ]

    @Test("Base", arguments: bases)
    func base(url: String, origin: String, prefix: String) throws {
        let base = try ProxyTarget.Base(url)
        #expect(base.origin == origin && base.prefix == prefix)
    }

    static let badBases = [
        "http://api.example.com", "api.example.com", "https://", "https:///v1", "https://user:pw@api.example.com",
        "https://api.example.com@evil.example", "https://api.example.com/v1?x=1", "https://api.example.com/v1#f",
        "https://api.example.com:0", "https://api.example.com:65536", "https://api.example.com:x",
        "https://api..example.com", "https://-api.example.com", "https://api.example.com/a/../b",
        "https://api.example.com/a%2fb", "https://api.example.com//v1", "https://[zz::1]/", "https://[::1",
        "https://api.example.com/v1 ",
    ]

    @Test("Bad base", arguments: badBases)
    func badBase(url: String) {
        #expect(throws: ProxyTarget.Failure.self, "\(url)") { try ProxyTarget.Base(url) }
    }

    @Test func theJoinedHostIsAlwaysTheBasesHost() throws {
        let base = try ProxyTarget.Base("https://api.example.com")
        for path in ["/x", "/:443@evil.example", "/%40evil.example", "/.evil.example"] {
            if let url = try? ProxyTarget.url(base: base, path: path, query: "u=1") {
                #expect(url.hasPrefix("https://api.example.com/"), "\(url)")
            }
        }
    }
}
