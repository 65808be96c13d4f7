import BrokerCore
import BrokerFakeProviders
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerApp

/// The connect page names each account as the provider named the user: a handle or a name when it gives one, else another display
/// name, else an email; the uid only when it gives none.
@Suite(.scoped) struct ConnectPageLabelTests {
    static let secret = "LABEL-CLIENT-SECRET-0123456789abcdef"

    func label(login: String?, displayName: String?, email: String?) async throws -> String {
        var configuration = FakeOAuth2Provider.Configuration.rfc6749(clientSecret: Self.secret)
        configuration.login = login
        configuration.displayName = displayName
        configuration.email = email
        var behaviour = FakeOAuth2Provider.Behaviour(dialect: .rfc6749)
        behaviour.users = .fixed("7001")
        let acme = try FakeOAuth2Provider.scoped(configuration, behaviour: behaviour)
        let harness = try BrokerHarness(
            providersJSON: "{\"providers\": {\(acme.providerEntry(secretVariable: "ACME_SECRET"))}}",
            environment: ["ACME_SECRET": Self.secret])
        let browser = Browser(brokerPort: harness.port, providerPort: acme.port)
        #expect(await browser.connect(provider: "acme")?.status == 200)
        let page = try #require(await browser.get("/", headers: [("Accept", "text/html")]))
        let row = try #require(page.body.range(of: "data-account=\"acme:7001\"").map { String(page.body[$0.upperBound...]) })
        return String(row.prefix { $0 != "\n" })
    }

    @Test func labelsEachAccountWithWhatTheProviderSaid() async throws {
        #expect(try await label(login: "ada", displayName: "Ada Lovelace", email: "ada@example.com").contains("ada · user id 7001"))
        #expect(try await label(login: nil, displayName: "Ada Lovelace", email: "ada@example.com").contains("Ada Lovelace · user id 7001"))
        #expect(try await label(login: nil, displayName: nil, email: "ada@example.com").contains("ada@example.com · user id 7001"))
        let bare = try await label(login: nil, displayName: nil, email: nil)
        #expect(bare.contains("user id 7001") && !bare.contains("·"))
    }
}
