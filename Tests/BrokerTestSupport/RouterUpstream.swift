import BrokerCore
import BrokerHTTP

/// An ``UpstreamClient`` that hands each request to a ``Router`` in this process (a fake provider's), without a socket.
///
/// The provider sees the request as its server would parse it (path, query,
/// header fields, body) and answers with its real wire format; only the
/// scheme and host of the URL are dropped. For tests that make thousands of
/// provider calls, where a socket per call adds time and nothing else.
public struct RouterUpstream: UpstreamClient {
    /// The routes that answer.
    public let router: Router

    /// Sends every request to `router`.
    public init(router: Router) {
        self.router = router
    }

    /// The router's answer to `request`; a method the router cannot know fails as a transport error.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        guard let method = HTTPMethod(rawValue: request.method) else {
            throw .transport(.invalidRequest, "unsupported method \(request.method)")
        }
        var target = request.url
        if let scheme = target.range(of: "://") {
            let rest = target[scheme.upperBound...]
            target = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        }
        let question = target.firstIndex(of: "?")
        var fields = HTTPHeaders([(name: "Host", value: "127.0.0.1")] + request.headers.map { (name: $0.0, value: $0.1) })
        if !request.body.isEmpty { fields.add(name: "Content-Length", value: String(request.body.count)) }
        let head = HTTPRequestHead(
            method: method, target: target, path: question.map { String(target[..<$0]) } ?? target,
            query: question.map { String(target[target.index(after: $0)...]) }, version: .http1_1,
            headers: fields, keepAlive: true, expectContinue: false,
            framing: request.body.isEmpty ? .none : .length(request.body.count))
        let response = await router.respond(to: Request(head: head, body: request.body, remoteAddress: "127.0.0.1"))
        return UpstreamResponse(
            status: response.status.code, headers: response.headers.fields.map { ($0.name, $0.value) }, body: response.body)
    }
}
