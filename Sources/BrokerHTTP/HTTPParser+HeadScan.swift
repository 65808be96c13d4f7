extension HTTPParser {
    /// What one scanning step of the head found.
    enum HeadStep {
        /// The phase changed; keep scanning.
        case proceed
        /// The bytes so far are a valid prefix; wait for more.
        case needMore
        /// The head is malformed or over a limit.
        case failure(HTTPParseError)
        /// The blank line ending the head was read; the head is this many bytes long.
        case complete(Int)
    }

    /// Progress through one request head, kept between calls so that no byte is scanned twice.
    ///
    /// Indices are offsets into the caller's unconsumed bytes, which do not move
    /// while the head is incomplete because nothing is consumed until `.head`.
    struct HeadScan: Sendable {
        /// The part of the head being scanned.
        enum Phase: Sendable {
            /// Before the request line; empty lines are skipped here (RFC 9112 §2.2).
            case start
            /// A CR of a leading empty line was read; LF must follow.
            case leadingLF
            /// Inside the method token.
            case method
            /// Inside the request-target.
            case target
            /// Inside the HTTP-version.
            case version
            /// The CR ending the request line was read; LF must follow.
            case requestLineLF
            /// Inside the header section, at or after `lineStart`.
            case fields
        }

        /// The current phase.
        var phase: Phase = .start
        /// The next byte to examine; 0 means the request has not begun.
        var pos = 0
        /// Where the current request-line token began.
        var tokenStart = 0
        /// Where the current field line began.
        var lineStart = 0
        /// Where the header section began (just after the request line).
        var headerStart = 0
        /// Empty lines skipped before the request line.
        var emptyLines = 0

        /// The method from the request line.
        var method: HTTPMethod = .GET
        /// The request-target as sent.
        var target = ""
        /// The path part of the target.
        var path = ""
        /// The query part of the target, if any.
        var query: String?
        /// The version from the request line.
        var version = HTTPVersion.http1_1
        /// The header fields in order.
        var fields: [(name: String, value: String)] = []

        /// How many Host fields were received.
        var hostCount = 0
        /// The Content-Length value, once one valid field was received.
        var contentLength: Int?
        /// The Transfer-Encoding fields combined.
        var transferCodings = TransferCodings()
        /// Whether a Connection field carried `close`.
        var connectionClose = false
        /// Whether a Connection field carried `keep-alive`.
        var connectionKeepAlive = false
        /// Whether an Expect field carried `100-continue`.
        var expectsContinue = false
        /// Whether an Expect field carried anything else.
        var expectsOther = false

        /// Scans from `pos` as far as `b` allows, one phase at a time.
        mutating func advance(_ b: Bytes, limits: HTTPParserLimits) -> HeadStep {
            switch phase {
            case .start: return scanStart(b)
            case .leadingLF: return scanLeadingLF(b)
            case .method: return scanMethod(b)
            case .target: return scanTarget(b, limits: limits)
            case .version: return scanVersion(b)
            case .requestLineLF: return scanRequestLineLF(b)
            case .fields: return scanFields(b, limits: limits)
            }
        }

        /// RFC 9112 §2.2: skip a few CRLFs before the request line; a bare LF is invalid.
        private mutating func scanStart(_ b: Bytes) -> HeadStep {
            guard pos < b.count else { return .needMore }
            switch b[pos] {
            case HTTPParser.cr:
                emptyLines += 1
                guard emptyLines <= HTTPParser.maxLeadingEmptyLines else {
                    return .failure(.badRequest("Too many empty lines before the request line."))
                }
                pos += 1
                phase = .leadingLF
                return .proceed
            case HTTPParser.lf:
                return .failure(.badRequest("Lines must end with CRLF, not a bare LF."))
            default:
                tokenStart = pos
                phase = .method
                return .proceed
            }
        }

        /// The LF of a leading empty line.
        private mutating func scanLeadingLF(_ b: Bytes) -> HeadStep {
            guard pos < b.count else { return .needMore }
            // RFC 9112 §2.2: a bare CR is invalid.
            guard b[pos] == HTTPParser.lf else { return .failure(.badRequest("A CR must be followed by LF.")) }
            pos += 1
            phase = .start
            return .proceed
        }
    }
}

extension HTTPParser {
    /// Runs the head scanner and turns its verdict into an event.
    mutating func parseHead(_ b: Bytes) -> (event: Event, consumed: Int) {
        // The caller must pass at least the bytes already scanned; if it did not, start over.
        if b.count < scan.pos { scan = HeadScan() }
        while true {
            switch scan.advance(b, limits: limits) {
            case .proceed: continue
            case .needMore: return (.needMore, 0)
            case .failure(let error): return fail(error)
            case .complete(let length): return completeHead(length: length)
            }
        }
    }
}
