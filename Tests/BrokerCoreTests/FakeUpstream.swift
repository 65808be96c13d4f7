import BrokerCore
import BrokerCrypto

/// An in-process provider: answers each request by the longest matching URL prefix and records every request.
actor FakeUpstream: UpstreamClient {
    /// How one endpoint answers.
    typealias Answer = @Sendable (UpstreamRequest) -> Result<UpstreamResponse, UpstreamError>

    private var routes: [(prefix: String, answer: Answer)] = []
    /// Every request received, in order.
    private(set) var requests: [UpstreamRequest] = []

    /// Answers requests whose URL starts with `prefix` with `answer`; a later route for the same prefix wins.
    func on(_ prefix: String, _ answer: @escaping Answer) {
        routes.removeAll { $0.prefix == prefix }
        routes.append((prefix, answer))
    }

    /// Answers requests whose URL starts with `prefix` with `response`.
    func on(_ prefix: String, respond response: UpstreamResponse) {
        on(prefix) { _ in .success(response) }
    }

    /// Fails requests whose URL starts with `prefix` with `error`.
    func on(_ prefix: String, fail error: UpstreamError) {
        on(prefix) { _ in .failure(error) }
    }

    /// Records `request` and answers it; an unknown URL gets 404.
    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        requests.append(request)
        let route = routes.filter { request.url.hasPrefix($0.prefix) }.max { $0.prefix.count < $1.prefix.count }
        guard let route else { return UpstreamResponse(status: 404, body: Array("not found".utf8)) }
        return try route.answer(request).get()
    }

    /// The requests whose URL starts with `prefix`.
    func requests(to prefix: String) -> [UpstreamRequest] {
        requests.filter { $0.url.hasPrefix(prefix) }
    }
}

extension UpstreamRequest {
    /// The form body as a dictionary (last value wins).
    var form: [String: String] {
        Dictionary(PercentEncoding.parseForm(String(decoding: body, as: UTF8.self)).map { ($0.name, $0.value) }) { $1 }
    }

    /// The URL's query as a dictionary.
    var query: [String: String] {
        guard let mark = url.firstIndex(of: "?") else { return [:] }
        return Dictionary(PercentEncoding.parseForm(String(url[url.index(after: mark)...])).map { ($0.name, $0.value) }) { $1 }
    }
}
