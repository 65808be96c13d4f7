import BrokerHTTP

extension Request {
    /// A request as the parser hands it to a route: `target` split into path and query, HTTP/1.1, keep-alive,
    /// the body framed by its length; for calling a ``Router`` in process.
    public static func make(
        _ method: HTTPMethod = .GET, _ target: String, headers: [(String, String)] = [],
        body: String = ""
    ) -> Request {
        let question = target.firstIndex(of: "?")
        let path = question.map { String(target[..<$0]) } ?? target
        let query = question.map { String(target[target.index(after: $0)...]) }
        var fields = HTTPHeaders([(name: "Host", value: "127.0.0.1")] + headers.map { (name: $0.0, value: $0.1) })
        if !body.isEmpty { fields.add(name: "Content-Length", value: String(body.utf8.count)) }
        let head = HTTPRequestHead(
            method: method, target: target, path: path, query: query, version: .http1_1,
            headers: fields, keepAlive: true, expectContinue: false,
            framing: body.isEmpty ? .none : .length(body.utf8.count))
        return Request(head: head, body: Array(body.utf8), remoteAddress: "127.0.0.1")
    }
}
