import BrokerHTTP
import Testing

@testable import BrokerApp

/// Browsers get pages, curl and API clients keep their JSON.
@Suite struct ContentNegotiationTests {
    static let chrome =
        "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
    static let firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    static let safari = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

    @Test(arguments: [
        chrome, firefox, safari, "text/html", "TEXT/HTML", " text/html ; q=0.5 ", "text/html;q=0.001",
        "text/html, application/json;q=0.9", "application/json, text/html", "text/html;level=1;q=1.0",
    ])
    func browsersGetHTML(accept: String) {
        #expect(ContentNegotiation.representation(accept: accept) == .html)
    }

    @Test(
        arguments: [
            nil, "", "*/*", "application/json", "application/json, */*", "text/*", "text/plain", "application/xhtml+xml",
            "text/html;q=0", "text/html;q=0.000", "text/html;q=0.0", "application/json, text/html;q=0.5",
            "text/html;q=2", "text/html;q=1.5", "text/html;q=abc", "text/html;q=0.0001", "text/html;q=-1",
        ] as [String?])
    func everyoneElseKeepsJSON(accept: String?) {
        #expect(ContentNegotiation.representation(accept: accept) == .json)
    }

    @Test(arguments: [("0", 0.0), ("0.", 0.0), ("0.5", 0.5), ("0.125", 0.125), ("1", 1.0), ("1.", 1.0), ("1.000", 1.0)])
    func validWeightsParse(text: String, value: Double) {
        #expect(ContentNegotiation.qvalue(text) == value)
    }

    @Test(arguments: ["", "2", "1.5", "1.001", "0.1234", ".5", "0,5", "-0", "abc", "0.5 "])
    func invalidWeightsAreRefused(text: String) {
        #expect(ContentNegotiation.qvalue(text) == nil)
    }

    static func request(accept: [String]) -> Request {
        let head = HTTPRequestHead(
            method: .GET, target: "/callback", path: "/callback", query: nil, version: .http1_1,
            headers: HTTPHeaders(accept.map { ("Accept", $0) }), keepAlive: true,
            expectContinue: false, framing: .none)
        return Request(head: head)
    }

    @Test func repeatedAcceptFieldsAreOneList() {
        // RFC 9110 §5.3: two Accept fields mean the same as one joined by a comma.
        #expect(Self.request(accept: ["application/json;q=0.5", "text/html"]).wantsHTML)
        #expect(!Self.request(accept: ["*/*"]).wantsHTML)
        #expect(!Self.request(accept: []).wantsHTML)
    }
}
