/// One complete request as a handler sees it: head, body, and helpers for query and cookies.
public struct Request: Sendable {
    /// The request line and headers.
    public let head: HTTPRequestHead
    /// The complete body (empty when none was sent, or when it arrives through `bodyStream`).
    public let body: [UInt8]
    /// The body as it arrives, for a streaming route whose request announced a body; nil otherwise.
    public let bodyStream: RequestBody?
    /// The peer's address, `ip` or `[ipv6]`, when known.
    public let remoteAddress: String?
    /// The id naming this request in logs and in the `X-Request-Id` response field: the client's own when
    /// acceptable (see ``RequestID``), else a generated one.
    public let id: String

    /// Creates a request; the server is the usual source, tests may build one.
    public init(head: HTTPRequestHead, body: [UInt8] = [], bodyStream: RequestBody? = nil, remoteAddress: String? = nil) {
        self.head = head
        self.body = body
        self.bodyStream = bodyStream
        self.remoteAddress = remoteAddress
        id = RequestID.resolve(head.headers[RequestID.fieldName])
    }

    /// The method.
    public var method: HTTPMethod { head.method }
    /// The path without the query, still percent-encoded.
    public var path: String { head.path }
    /// The header fields.
    public var headers: HTTPHeaders { head.headers }

    /// The query's name/value pairs in order, percent-decoded with `+` as space.
    public var queryItems: [(name: String, value: String)] {
        guard let query = head.query else { return [] }
        return URLEncodedForm.parse(query)
    }

    /// The first query value for `name`, decoded.
    public func query(_ name: String) -> String? {
        guard let query = head.query else { return nil }
        return URLEncodedForm.first(name, in: query)
    }

    /// The first query parameter named none of `allowed`, decoded; nil when every name is allowed (or there is no query).
    public func unknownQueryName(allowed: [StaticString]) -> String? {
        guard let query = head.query else { return nil }
        return URLEncodedForm.firstUnknownName(in: query, allowed: allowed)
    }

    /// The cookies sent in `Cookie` fields (RFC 6265 §5.4), first value of each name wins.
    public var cookies: [String: String] {
        var jar: [String: String] = [:]
        for header in head.headers.values(for: "Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let eq = trimmed.firstIndex(of: "=") else { continue }
                let name = String(trimmed[..<eq]).trimmingSpaces
                let value = String(trimmed[trimmed.index(after: eq)...]).trimmingSpaces
                if jar[name] == nil { jar[name] = value }
            }
        }
        return jar
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
