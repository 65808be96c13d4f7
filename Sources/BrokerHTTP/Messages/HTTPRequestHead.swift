/// The request line and header section of one request, as the parser accepted them.
public struct HTTPRequestHead: Sendable {
    /// How the message body is delimited (RFC 9112 §6.3).
    public enum BodyFraming: Sendable, Equatable {
        /// No body: neither Content-Length nor Transfer-Encoding was sent.
        case none
        /// Exactly this many bytes follow (Content-Length).
        case length(Int)
        /// The body uses the chunked transfer coding.
        case chunked
    }

    /// The request method.
    public var method: HTTPMethod
    /// The request-target exactly as sent on the request line.
    ///
    /// For origin-form (`/path?query`, nearly every request) it is ``path`` and ``query`` joined again when asked
    /// for, so parsing a request builds no third string for it.
    public var target: String {
        get { sentTarget ?? query.map { path + "?" + $0 } ?? path }
        set { sentTarget = newValue }
    }
    /// The target as sent, when it is not ``path`` and ``query`` joined (absolute-form, asterisk-form); nil otherwise.
    var sentTarget: String?
    /// The path part of the target (origin-form, or taken from absolute-form), not percent-decoded.
    public var path: String
    /// The query part of the target without the `?`, not decoded; nil when absent.
    public var query: String?
    /// The protocol version from the request line.
    public var version: HTTPVersion
    /// The header fields in order, repeats kept.
    public var headers: HTTPHeaders
    /// Whether the connection may stay open after the response (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// Whether the client sent `Expect: 100-continue` on HTTP/1.1 (RFC 9110 §10.1.1).
    public var expectContinue: Bool
    /// How the body is delimited.
    public var framing: BodyFraming

    /// Creates a request head; the parser is the usual source, tests may build one.
    public init(
        method: HTTPMethod, target: String, path: String, query: String?,
        version: HTTPVersion, headers: HTTPHeaders, keepAlive: Bool,
        expectContinue: Bool, framing: BodyFraming
    ) {
        self.method = method
        sentTarget = target
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.expectContinue = expectContinue
        self.framing = framing
    }

    /// A request head whose target is in origin-form: `path`, then `?` and `query` when there is one.
    init(
        method: HTTPMethod, originFormPath path: String, query: String?, version: HTTPVersion, headers: HTTPHeaders,
        keepAlive: Bool, expectContinue: Bool, framing: BodyFraming
    ) {
        self.method = method
        sentTarget = nil
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.keepAlive = keepAlive
        self.expectContinue = expectContinue
        self.framing = framing
    }
}
