import Testing

@testable import BrokerCore

/// Salesforce's `instance_url` as the proxy's base: taken from the account's `raw` only when it is an `https` URL on
/// Salesforce's own domains, so a token answer cannot point the proxy (and the account's token) anywhere else.
struct TokenAnswerAPIBaseTests {
    static let rule = ProviderPresets.salesforce.apiBaseFromTokenAnswer

    @Test func aSalesforceInstanceIsTheBase() throws {
        let rule = try #require(Self.rule)
        #expect(rule.base(in: #"{"instance_url":"https://acme.my.salesforce.com","id":"x"}"#) == "https://acme.my.salesforce.com")
        #expect(rule.base(in: #"{"instance_url":"https://na42.salesforce.com/"}"#) == "https://na42.salesforce.com")
        #expect(rule.base(in: #"{"instance_url":"https://acme--dev.sandbox.my.salesforce.com"}"#) != nil)
        #expect(rule.base(in: #"{"instance_url":"https://acme.lightning.force.com"}"#) == "https://acme.lightning.force.com")
    }

    @Test(arguments: [
        #"{"instance_url":"http://acme.my.salesforce.com"}"#, #"{"instance_url":"https://evil.com"}"#,
        #"{"instance_url":"https://salesforce.com.evil.com"}"#, #"{"instance_url":"https://evilsalesforce.com"}"#,
        #"{"instance_url":"https://user@acme.my.salesforce.com"}"#, #"{"instance_url":"https://acme.my.salesforce.com:8443"}"#,
        #"{"instance_url":"https://acme.my.salesforce.com?x=1"}"#, #"{"instance_url":"https://acme.my.salesforce.com#f"}"#,
        #"{"instance_url":"https://127.0.0.1"}"#, #"{"instance_url":7}"#, #"{"other":"https://acme.my.salesforce.com"}"#,
        "not json", "",
    ])
    func anythingElseIsNoBase(_ extras: String) throws {
        #expect(try #require(Self.rule).base(in: extras) == nil)
    }

    @Test func noAccountRawIsNoBase() throws {
        #expect(try #require(Self.rule).base(in: nil) == nil)
    }
}
