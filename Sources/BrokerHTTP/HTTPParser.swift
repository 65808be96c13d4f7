/// A pure HTTP/1.1 request parser (RFC 9112): bytes in, events out, no I/O.
///
/// Placeholder: the state machine lands with its tests.
public struct HTTPParser: Sendable {
    /// What one call to `parse` found.
    public enum Event: Sendable {
        /// More bytes are needed before anything else can be said.
        case needMore
        /// The request line and headers are complete and valid.
        case head(HTTPRequestHead)
        /// The body is complete (empty when there is none); the parser is ready for the next request.
        case end(body: [UInt8])
        /// The request is malformed; answer `error.status` and close. The parser stays failed.
        case error(HTTPParseError)
    }

    /// The limits in force.
    public let limits: HTTPParserLimits

    /// Creates a parser waiting for the first byte of a request.
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Whether no byte of the next request has been consumed or scanned yet.
    public var isIdle: Bool { true }

    /// Parses from `bytes`, which begin at the first byte not consumed by earlier calls.
    /// Returns the event and how many bytes the caller must drop from the front.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        (.error(.badRequest("not implemented yet")), 0)
    }
}
