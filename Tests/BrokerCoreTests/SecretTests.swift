import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// Secrets never reach text: descriptions, interpolation, reflection and dumps are redacted.
struct SecretTests {
    private let sentinels = [
        "access-SENTINEL-1", "refresh-SENTINEL-2", "secret-SENTINEL-3", "verifier-SENTINEL", "request-secret-SENTINEL",
    ]

    private func renderings(of value: Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), "\(value)", dumped]
    }

    @Test func secretPrintsRedacted() {
        let secret = Secret("access-SENTINEL-1")
        #expect(secret.description == "<redacted>")
        #expect(secret.debugDescription == "<redacted>")
        #expect(secret.value == "access-SENTINEL-1")
        let optional: Secret? = secret
        for text in renderings(of: secret) + renderings(of: optional as Any) + renderings(of: [secret]) {
            #expect(!text.contains("SENTINEL"), "\(text)")
        }
    }

    @Test func accountAndFlowRenderingsShowNoSecret() {
        let account = Account.makeFull()
        var flow = PendingFlow.make(state: PendingFlow.randomState())
        flow.requestTokenSecret = Secret("request-secret-SENTINEL")
        for text in renderings(of: account) + renderings(of: flow) + renderings(of: [account]) {
            for sentinel in sentinels { #expect(!text.contains(sentinel), "\(text)") }
            #expect(!text.contains(flow.state))
        }
        #expect(String(describing: account).contains("twitter:783214"))
        #expect(String(describing: flow).contains("github"))
    }

    @Test func storeErrorsShowNoSecret() throws {
        let codec = PlainJSONAccountCodec()
        var bytes = try codec.encode(.makeFull())
        bytes.removeLast(10)
        do {
            _ = try codec.decode(bytes, path: "p")
            Issue.record("truncated record decoded")
        } catch {
            for sentinel in sentinels { #expect(!String(describing: error).contains(sentinel)) }
        }
    }
}
