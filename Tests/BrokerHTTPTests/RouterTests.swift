import BrokerHTTP
import BrokerTestSupport
import Testing

/// The router in process: exact paths first, then prefixes; 404 and 405 as the server sends them.
@Suite struct RouterTests {
    static func router() -> Router {
        var router = Router()
        router.get("/a") { _ in Response.json(.ok, "\"exact\"") }
        router.add(.GET, prefix: "/a/", .sync({ request in Response.json(.ok, JSONString.quote(request.path)) }))
        router.add(.GET, "/a/fixed", .async({ _ in Response.json(.ok, "\"fixed\"") }))
        router.add(
            .POST, "/form",
            .fastPath(
                { _ in nil },
                otherwise: { request in
                    Response.json(.ok, JSONString.quote(String(decoding: request.body, as: UTF8.self)))
                }))
        return router
    }

    static func text(_ response: Response) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test func refusalsArePlainTextUnlessTheApplicationRendersThem() async {
        var router = Self.router()
        let missing = await router.respond(to: .make(.GET, "/nowhere"))
        #expect(missing.headers["Content-Type"] == "text/plain; charset=utf-8" && Self.text(missing) == "No such endpoint.\n")
        router.refusals = RefusalRenderer { refusal in
            Response.json(refusal.status, "{\"problem\":\(JSONString.quote(refusal.code))}", headers: refusal.headers)
        }
        let wrong = await router.respond(to: .make(.DELETE, "/a"))
        #expect(wrong.status.code == 405 && wrong.headers["Allow"] == "GET, HEAD")
        #expect(Self.text(wrong) == #"{"problem":"method_not_allowed"}"#)
    }

    @Test func exactPathsWinOverPrefixesAndAPrefixAloneIsNoMatch() async {
        let router = Self.router()
        #expect(Self.text(await router.respond(to: .make(.GET, "/a"))) == "\"exact\"")
        #expect(Self.text(await router.respond(to: .make(.GET, "/a/fixed"))) == "\"fixed\"")
        #expect(Self.text(await router.respond(to: .make(.GET, "/a/token123?x=1"))) == "\"/a/token123\"")
        #expect(await router.respond(to: .make(.GET, "/a/")).status.code == 404)
        #expect(await router.respond(to: .make(.GET, "/ab")).status.code == 404)
        #expect(router.paths == ["/a", "/a/*", "/a/fixed", "/form"])
    }

    @Test func theAnswersNoHandlerGives() async {
        let router = Self.router()
        let missing = await router.respond(to: .make(.GET, "/nowhere"))
        #expect(missing.status.code == 404 && Self.text(missing) == "No such endpoint.\n")
        let wrong = await router.respond(to: .make(.DELETE, "/a/x"))
        #expect(wrong.status.code == 405 && wrong.headers["Allow"] == "GET, HEAD")
        #expect(Self.text(await router.respond(to: .make(.POST, "/form", body: "k=v"))) == "\"k=v\"")
    }
}
