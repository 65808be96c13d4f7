import BrokerCore
import BrokerFakeProviders
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// End users and tags over real sockets: a back end starts flows for its users with `POST /authorize`, the
/// accounts carry them, and `GET /accounts` finds them by every filter, page by page.
@Suite(.scoped) struct EndUserEndToEndTests {
    static let clientSecret = "WEIBO-CLIENT-SECRET-SENTINEL-0123456789"
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey)]

    struct Setup {
        let weibo: FakeOAuth2Provider
        let broker: BrokerHarness
        var browser: Browser { Browser(brokerPort: broker.port, providerPort: weibo.port) }
    }

    static func setUp() throws -> Setup {
        let weibo = try FakeOAuth2Provider.scoped(.weibo(clientSecret: clientSecret))
        let broker = try BrokerHarness(
            providersJSON: "{\"providers\": {\(weibo.providerEntry)}}", environment: ["FAKE_WEIBO_SECRET": clientSecret])
        return Setup(weibo: weibo, broker: broker)
    }

    /// Starts a flow with `POST /authorize` (`body` of `type`), lets the browser sign in as `uid`, and returns the start's status.
    static func connect(_ s: Setup, uid: String, type: String, body: String) async throws -> Int {
        s.weibo.set { $0.users = .fixed(uid) }
        let start = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/authorize", headers: api + [("Content-Type", type)], body: body))
        guard start.status == 200 else { return start.status }
        let url = try #require(json(start.body)["authorize_url"] as? String)
        let callback = try #require(await s.browser.visitProvider(url))
        #expect(await s.browser.get(callback)?.status == 200)
        return 200
    }

    static func json(_ body: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
    }

    /// The ids and next cursor of `GET /accounts` + `query`, or its status when not 200.
    static func list(_ s: Setup, _ query: String) async throws -> (ids: [String], next: String?, status: Int, body: String) {
        let reply = try #require(await TestHTTP.send(port: s.broker.port, target: "/accounts" + query, headers: api))
        let object = json(reply.body)
        let ids = (object["accounts"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        return (ids, object["next_cursor"] as? String, reply.status, reply.body)
    }

    @Test func accountsCarryTheirEndUserAndTagsAndEveryFilterFindsThem() async throws {
        let s = try Self.setUp()
        let json = "application/json"
        let form = "application/x-www-form-urlencoded"
        #expect(
            try await Self.connect(
                s, uid: "1001", type: json,
                body:
                    #"{"provider":"weibo","end_user_id":"user-42","end_user_email":"ada@example.com","end_user_name":"Ada","tags":{"plan":"pro","env":"prod"}}"#
            ) == 200)
        #expect(try await Self.connect(s, uid: "1002", type: form, body: "provider=weibo&end_user_id=user-42&tag=plan:free") == 200)
        #expect(
            try await Self.connect(s, uid: "1003", type: form, body: "provider=weibo&end_user_id=user-7&tag=plan:pro&tag=env:dev") == 200)
        #expect(
            try await Self.connect(s, uid: "1004", type: json, body: #"{"provider":"weibo","end_user_id":null,"tags":null}"#) == 200)

        // The full account and the summary carry them; an account without any says null and {}.
        let account = try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:1001", headers: Self.api))
        let fields = Self.json(account.body)
        #expect(fields["end_user_id"] as? String == "user-42" && fields["end_user_email"] as? String == "ada@example.com")
        #expect(fields["end_user_name"] as? String == "Ada" && fields["tags"] as? [String: String] == ["plan": "pro", "env": "prod"])
        let plain = Self.json(
            try #require(await TestHTTP.send(port: s.broker.port, target: "/account?id=weibo:1004", headers: Self.api)).body)
        #expect(plain["end_user_id"] is NSNull && plain["tags"] as? [String: String] == [:])

        #expect(try await Self.list(s, "").ids == ["weibo:1001", "weibo:1002", "weibo:1003", "weibo:1004"])
        #expect(try await Self.list(s, "?end_user_id=user-42").ids == ["weibo:1001", "weibo:1002"])
        #expect(try await Self.list(s, "?end_user_id=user-4").ids.isEmpty)
        #expect(try await Self.list(s, "?provider=weibo&end_user_id=user-7").ids == ["weibo:1003"])
        #expect(try await Self.list(s, "?provider=github").ids.isEmpty)
        #expect(try await Self.list(s, "?tag=plan:pro").ids == ["weibo:1001", "weibo:1003"])
        #expect(try await Self.list(s, "?tag=plan:pro&tag=env:prod").ids == ["weibo:1001"])
        #expect(try await Self.list(s, "?tag=plan:pro&end_user_id=user-7").ids == ["weibo:1003"])
        #expect(try await Self.list(s, "?status=active").ids.count == 4)
        #expect(try await Self.list(s, "?status=expired").ids.isEmpty)
        #expect(try await Self.list(s, "?status=reauthorization_required").ids.isEmpty)

        // Pages: the cursor leads on, and the last page's is null.
        let first = try await Self.list(s, "?limit=3")
        #expect(first.ids == ["weibo:1001", "weibo:1002", "weibo:1003"])
        let cursor = try #require(first.next)
        let second = try await Self.list(s, "?limit=3&cursor=" + cursor)
        #expect(second.ids == ["weibo:1004"] && second.next == nil && second.body.hasSuffix(#""next_cursor":null}"#))
        let mine = try await Self.list(s, "?end_user_id=user-42&limit=1")
        #expect(mine.ids == ["weibo:1001"])
        #expect(try await Self.list(s, "?end_user_id=user-42&limit=1&cursor=" + (mine.next ?? "")).ids == ["weibo:1002"])

        // A cursor is the broker's own and bound to its filters: one made up, or carried to other filters, is refused.
        let madeUp = Data("weibo:1001".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        for query in [
            "?cursor=" + madeUp, "?limit=3&cursor=" + madeUp + "." + String(cursor.split(separator: ".").last ?? ""),
            "?end_user_id=user-7&limit=3&cursor=" + cursor, "?provider=weibo&limit=3&cursor=" + cursor,
            "?tag=plan:pro&end_user_id=user-42&limit=1&cursor=" + (mine.next ?? ""),
        ] {
            let reply = try await Self.list(s, query)
            #expect(reply.status == 400 && reply.body.contains("cursor is not one this broker gave out"), "\(query): \(reply.body)")
        }

        // A browser signing in again keeps the end user and tags; the API with a new end user replaces both.
        s.weibo.set { $0.users = .fixed("1001") }
        #expect(await s.browser.connect(provider: "weibo")?.status == 200)
        #expect(try await Self.list(s, "?end_user_id=user-42&tag=env:prod").ids == ["weibo:1001"])
        #expect(try await Self.connect(s, uid: "1002", type: form, body: "provider=weibo&end_user_id=user-9") == 200)
        #expect(try await Self.list(s, "?end_user_id=user-42").ids == ["weibo:1001"])
        #expect(try await Self.list(s, "?end_user_id=user-9").ids == ["weibo:1002"])
        #expect(try await Self.list(s, "?tag=plan:free").ids.isEmpty)

        // The browser's own list applies the same filters to its own accounts only.
        let browser = s.browser
        s.weibo.set { $0.users = .fixed("1003") }
        #expect(await browser.connect(provider: "weibo")?.status == 200)
        let own = try #require(await browser.get("/accounts?tag=plan:pro"))
        #expect(Self.json(own.body)["accounts"].map { ($0 as? [[String: Any]])?.compactMap { $0["id"] as? String } } == ["weibo:1003"])
        #expect(try #require(await browser.get("/accounts?end_user_id=user-42")).body == #"{"accounts":[],"next_cursor":null}"#)
        // The email stays out of the log.
        #expect(!s.broker.log.contains("ada@example.com"))
    }

    @Test func badEndUsersAndTagsAre400NamingTheFieldAndStartNoFlow() async throws {
        let s = try Self.setUp()
        let form = "application/x-www-form-urlencoded"
        let refused: [(body: String, type: String, field: String)] = [
            ("provider=weibo&end_user_id=", form, "end_user_id"),
            ("provider=weibo&end_user_id=" + String(repeating: "x", count: 257), form, "end_user_id"),
            ("provider=weibo&end_user_id=caf%C3%A9", form, "end_user_id"),
            ("provider=weibo&end_user_id=a%0Ab", form, "end_user_id"),
            ("provider=weibo&end_user_email=ada@example.com", form, "end_user_id"),
            ("provider=weibo&end_user_id=u&end_user_email=nobody", form, "end_user_email"),
            ("provider=weibo&end_user_id=u&end_user_name=a%07b", form, "end_user_name"),
            ("provider=weibo&tag=plan", form, "tags"),
            ("provider=weibo&tag=Plan:pro", form, "tags"),
            ("provider=weibo&tag=plan:" + String(repeating: "v", count: 257), form, "tags"),
            ("provider=weibo&tag=plan:a&tag=plan:b", form, "tags"),
            ("provider=weibo&" + (0..<11).map { "tag=k\($0):v" }.joined(separator: "&"), form, "tags"),
            (#"{"provider":"weibo","tags":["plan:pro"]}"#, "application/json", "tags"),
            (#"{"provider":"weibo","tags":{"plan":1}}"#, "application/json", "tags"),
            (#"{"provider":"weibo","end_user_id":42}"#, "application/json", "end_user_id"),
        ]
        for (body, type, field) in refused {
            let reply = try #require(
                await TestHTTP.send(
                    port: s.broker.port, method: "POST", target: "/authorize", headers: Self.api + [("Content-Type", type)], body: body))
            #expect(reply.status == 400, "\(body)")
            #expect(reply.body.contains(#""error":"bad_request""#) && reply.body.contains(field), "\(body): \(reply.body)")
        }
        #expect(s.weibo.tokenCalls == 0)
        // Ten tags and the longest values are fine.
        let ten =
            "provider=weibo&end_user_id=" + String(repeating: "x", count: 256) + "&"
            + (0..<10).map { "tag=k\($0):" + String(repeating: "v", count: 256) }.joined(separator: "&")
        let accepted = try #require(
            await TestHTTP.send(
                port: s.broker.port, method: "POST", target: "/authorize", headers: Self.api + [("Content-Type", form)], body: ten))
        #expect(accepted.status == 200)

        // The browser's GET /authorize refuses each by name: a browser cannot choose whom it belongs to.
        for query in ["end_user_id=u", "end_user_email=a@b", "end_user_name=n", "tag=plan:pro", "tags=x"] {
            let reply = try #require(await TestHTTP.send(port: s.broker.port, target: "/authorize?provider=weibo&" + query))
            let field = String(query.prefix { $0 != "=" })
            #expect(reply.status == 400 && reply.body.contains(field) && reply.header("Location") == nil, "\(query)")
        }

        // GET /accounts refuses malformed filters and paging, naming them.
        for (query, field) in [
            ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=ten", "limit"), ("limit=%2B5", "limit"), ("limit=05", "limit"),
            ("limit=5%20", "limit"), ("limit=-1", "limit"), ("cursor=%21%21", "cursor"), ("cursor=", "cursor"),
            ("status=gone", "status"), ("tag=plan", "tag"), ("tag=PLAN:x", "tag"), ("end_user_id=", "end_user_id"),
        ] {
            let reply = try await Self.list(s, "?" + query)
            #expect(reply.status == 400 && reply.body.contains(#""error":"bad_request""#) && reply.body.contains(field), "\(query)")
        }
        #expect(try await Self.list(s, "?limit=1000").status == 200)
    }
}
