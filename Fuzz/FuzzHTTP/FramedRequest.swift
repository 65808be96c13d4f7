import BrokerHTTP

/// One request as a delivery of the input framed it: what it asked for and where its bytes lie.
struct FramedRequest: Equatable {
    /// The method from the request line.
    let method: HTTPMethod
    /// The request-target as sent.
    let target: String
    /// The protocol version.
    let version: HTTPVersion
    /// Whether the connection may carry another request after this one.
    let keepAlive: Bool
    /// How the body was delimited.
    let framing: HTTPRequestHead.BodyFraming
    /// The decoded body.
    let body: [UInt8]
    /// Offset in the input where the request began (leading empty lines included).
    let start: Int
    /// Offset just past the blank line that ended the head.
    let headEnd: Int
    /// Offset just past the request's last byte.
    let end: Int

    /// The framing as the differential check names it.
    var framingName: String {
        switch framing {
        case .none: "none"
        case .length: "length"
        case .chunked: "chunked"
        }
    }
}

/// How a delivery of the input ended after its last complete request.
enum RunEnding: Equatable {
    /// Every byte was consumed and the parser waits for a new request.
    case idle
    /// The input stopped inside a request; `headSeen` says whether its head was complete.
    case partial(headSeen: Bool, unconsumed: Int)
    /// The parser rejected the request that began at offset `at`.
    case failed(HTTPParseError, at: Int)

    /// Whether this is a failure caused by a size limit (413, 414, 431) rather than by the syntax.
    var isLimitFailure: Bool {
        guard case .failed(let error, _) = self else { return false }
        return [413, 414, 431].contains(error.status.code)
    }
}

/// Everything one delivery of an input produced.
struct RunOutcome: Equatable {
    /// The complete requests, in order.
    var requests: [FramedRequest]
    /// How the input ended.
    var ending: RunEnding
}
