import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// Typos are refused, never ignored: an unknown query parameter or field is `400` naming it, a conflicting pair is
/// `400`, a filter on an unknown provider is `404`, and a body that says JSON and is not says so.
@Suite(.scoped) struct StrictInputTests {
    static let api = [("Authorization", "Bearer " + BrokerHarness.apiKey), ("Content-Type", "application/json")]

    static func setUp() throws -> BrokerHarness {
        let provider = try FakeOAuth2Provider.scoped(.rfc6749(clientSecret: "ACME-SECRET-strict-inputs"))
        return try BrokerHarness(
            providersJSON: "{\"providers\": {\(provider.providerEntry())}}",
            environment: ["FAKE_ACME_SECRET": "ACME-SECRET-strict-inputs", "BROKER_CORS_ORIGINS": "https://app.example.com"],
            listen: false)
    }

    static func answer(_ broker: BrokerHarness, _ method: HTTPMethod, _ target: String, body: String = "") async -> (Int, String, String) {
        let reply = await broker.respond(method, target, headers: api, body: body)
        let json = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any]
        return (reply.status.code, json?["error"] as? String ?? "", json?["message"] as? String ?? "")
    }

    @Test func eachTypoIsRefusedNamingIt() async throws {
        let broker = try Self.setUp()
        let cases: [(HTTPMethod, String, String, Int, String)] = [
            (.GET, "/accounts?end_user=42", "", 400, "\"end_user\""),
            (.GET, "/accounts?%65nd_user=42", "", 400, "\"end_user\""),
            (.GET, "/accounts?provider=nope", "", 404, "nope"),
            (.GET, "/account?id=acme:1&foo=1", "", 400, "\"foo\""),
            (.GET, "/account?id=acme:1&provider=acme", "", 400, "not both"),
            (.DELETE, "/account?id=acme:1&uid=1", "", 400, "not both"),
            (.POST, "/account/refresh?id=acme:1&force=1", "", 400, "\"force\""),
            (.POST, "/authorize", "{\"provider\":\"acme\",\"enduser_id\":\"42\"}", 400, "\"enduser_id\""),
            (.POST, "/authorize", "{\"provider\":\"acme\"", 400, "not a JSON object"),
            (.GET, "/app-token?provider=acme&scopes=a", "", 400, "\"scopes\""),
            (.GET, "/flows/c3RhdGUtMTIzNDU2Nzg5MA?verbose=1", "", 400, "\"verbose\""),
            (.POST, "/connect/sessions", "{\"end_user_id\":\"u\",\"origni\":\"https://app.example.com\"}", 400, "\"origni\""),
            (.POST, "/connect/sessions", "{\"end_user_id\":", 400, "not valid JSON"),
            (.GET, "/webhooks?limt=5", "", 400, "\"limt\""),
            (.POST, "/backup?now=1", "", 400, "\"now\""),
        ]
        for (method, target, body, status, named) in cases {
            let (code, error, message) = await Self.answer(broker, method, target, body: body)
            #expect(code == status, "\(method) \(target) \(body): \(code) \(message)")
            #expect(error == (status == 404 ? "unknown_provider" : "bad_request") && message.contains(named), "\(target): \(message)")
        }
        // A browser's GET /authorize too.
        let browser = await broker.respond(.GET, "/authorize?provider=acme&retrun_to=https://app.example.com/")
        #expect(browser.status.code == 400 && String(decoding: browser.body, as: UTF8.self).contains("retrun_to"))
        // What each route does take still works.
        #expect(await Self.answer(broker, .GET, "/accounts?provider=acme&end_user_id=42&status=active&tag=a:b&limit=5").0 == 200)
        #expect(await Self.answer(broker, .POST, "/authorize", body: "{\"provider\":\"acme\",\"end_user_id\":\"42\"}").0 == 200)
    }
}
