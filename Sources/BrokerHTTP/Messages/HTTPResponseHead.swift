/// The status line and header section of a response an upstream server sent, with the framing the parser chose.
public struct HTTPResponseHead: Sendable {
    /// How the body of a response is delimited (RFC 9112 §6.3).
    public enum BodyFraming: Sendable, Equatable {
        /// No body: a HEAD request, or a 204 or 304 answer (RFC 9112 §6.3 item 1).
        case none
        /// Exactly this many bytes follow (§6.3 item 6).
        case length(Int)
        /// The chunked transfer coding (§6.3 item 4).
        case chunked
        /// The body runs until the server closes the connection (§6.3 item 8).
        case untilClose
    }

    /// The version from the status line.
    public var version: HTTPVersion
    /// The three-digit status code.
    public var status: Int
    /// The reason phrase as sent; may be empty.
    public var reason: String
    /// The header fields in order.
    public var headers: HTTPHeaders
    /// Whether the connection may carry another request once this response has been read (RFC 9112 §9.3).
    public var keepAlive: Bool
    /// How the body is delimited.
    public var framing: BodyFraming

    /// Creates a response head.
    public init(
        version: HTTPVersion, status: Int, reason: String, headers: HTTPHeaders, keepAlive: Bool, framing: BodyFraming
    ) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
        self.keepAlive = keepAlive
        self.framing = framing
    }
}
