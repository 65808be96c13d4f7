/// An answer the server gives on its own, without a handler: a request it cannot frame or that came too slowly, no
/// room for the connection, no route for the path or the method.
public struct Refusal: Sendable {
    /// The status the server answers with.
    public let status: HTTPStatus
    /// A short snake_case word naming the refusal (`bad_request`, `not_found`, `over_capacity`…).
    public let code: String
    /// A sentence for people; never echoes request bytes.
    public let message: String
    /// Fields the refusal needs (`Allow` on a 405).
    public let headers: HTTPHeaders

    /// Creates a refusal.
    public init(status: HTTPStatus, code: String, message: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The refusal for a request that could not be framed.
    init(_ error: HTTPParseError) {
        self.init(status: error.status, code: error.code, message: error.message)
    }
}

/// How the server turns its own refusals into responses. The transport does not know the application's error body:
/// the application hands its renderer to the ``Router`` so that a request no handler sees is answered in the shape
/// of its other errors. The default is the message as plain text.
public struct RefusalRenderer: Sendable {
    private let render: @Sendable (Refusal) -> Response

    /// A renderer that answers each refusal with `render`'s response.
    public init(_ render: @escaping @Sendable (Refusal) -> Response) {
        self.render = render
    }

    /// The response for `refusal`.
    public func response(_ refusal: Refusal) -> Response { render(refusal) }

    /// The message and a line feed as `text/plain`.
    public static let plainText = RefusalRenderer { refusal in
        var headers = refusal.headers
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        return Response(status: refusal.status, headers: headers, body: Array((refusal.message + "\n").utf8))
    }
}
