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
        /// The request-target as sent, when it is not in origin-form; nil when it is (``path`` and ``query`` give it).
        var target: String?
        /// The path part of the target.
        var path = ""
        /// The query part of the target, if any.
        var query: String?
        /// The version from the request line.
        var version = HTTPVersion.http1_1
        /// The header fields in order.
        var fields: [(name: String, value: String)] = []
        /// How many names and values longer than a small string (15 bytes) this head has had so far.
        var longStrings = 0

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
        ///
        /// `kept` holds the long names and values of the connection's previous message (``KeptStrings``).
        mutating func advance(_ b: Bytes, limits: HTTPParserLimits, kept: inout KeptStrings) -> HeadStep {
            switch phase {
            case .start: return scanStart(b)
            case .leadingLF: return scanLeadingLF(b)
            case .method: return scanMethod(b)
            case .target: return scanTarget(b, limits: limits)
            case .version: return scanVersion(b)
            case .requestLineLF: return scanRequestLineLF(b)
            case .fields: return scanFields(b, limits: limits, kept: &kept)
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
            switch scan.advance(b, limits: limits, kept: &kept) {
            case .proceed: continue
            case .needMore: return (.needMore, 0)
            case .failure(let error): return fail(error)
            case .complete(let length): return completeHead(length: length)
            }
        }
    }
}

/// The checks that need the whole header section, then the `.head` event.
extension HTTPParser {
    /// Decides framing, keep-alive and expectations for a complete head of `length` bytes.
    mutating func completeHead(length: Int) -> (event: Event, consumed: Int) {
        // Move the scan out (no copy of its strings) and leave a fresh one for the next request.
        var head = HeadScan()
        swap(&head, &scan)
        let isHTTP10 = head.version.minor == 0

        // RFC 9112 §3.2: an HTTP/1.1 request without Host MUST be answered 400.
        if !isHTTP10 && head.hostCount == 0 {
            return fail(.badRequest("An HTTP/1.1 request must have a Host header field."))
        }

        let framing: HTTPRequestHead.BodyFraming
        switch framingOf(head, isHTTP10: isHTTP10) {
        case .success(let found): framing = found
        case .failure(let error): return fail(error)
        }

        // RFC 9110 §10.1.1: only 100-continue is understood; Expect is ignored on HTTP/1.0.
        if !isHTTP10 && head.expectsOther { return fail(.expectationFailed) }

        // RFC 9110 §15.5.14: refuse an announced body over the limit before reading any of it (a deferred body
        // is checked against the limit its route chooses, in `startBody`).
        let deferred = defersBody && framing != .none && framing != .length(0)
        if !deferred, case .length(let size) = framing, size > limits.maxBodyBytes { return fail(.contentTooLarge) }

        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive".
        let keepAlive =
            isHTTP10
            ? head.connectionKeepAlive && !head.connectionClose
            : !head.connectionClose

        var request = HTTPRequestHead(
            method: head.method, originFormPath: head.path, query: head.query,
            version: head.version, headers: HTTPHeaders(head.fields), keepAlive: keepAlive,
            expectContinue: !isHTTP10 && head.expectsContinue, framing: framing)
        if let target = head.target { request.target = target }

        if deferred {
            state = .bodyPending(framing)
        } else {
            enterBody(framing)
        }
        return (.head(request), length)
    }

    /// RFC 9112 §6.1 and §6.3: the body framing, or the error a faulty framing earns.
    private func framingOf(_ head: HeadScan, isHTTP10: Bool) -> Result<HTTPRequestHead.BodyFraming, HTTPParseError> {
        let codings = head.transferCodings
        guard codings.isPresent else {
            if let length = head.contentLength { return .success(.length(length)) }
            return .success(.none)
        }
        // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
        if isHTTP10 {
            return .failure(.badRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request."))
        }
        // RFC 9112 §6.1 / §6.3 item 3: Content-Length with Transfer-Encoding is a smuggling vector; reject.
        if head.contentLength != nil {
            return .failure(.badRequest("Content-Length and Transfer-Encoding must not both be sent."))
        }
        // RFC 9112 §6.3 item 4 and §7: chunked once, and last, or the length cannot be determined.
        if codings.chunkedCount > 1 || (codings.chunkedCount == 1 && !codings.lastIsChunked) {
            return .failure(.badRequest("The chunked transfer coding must be applied once, last."))
        }
        // RFC 9112 §6.1: a transfer coding the server does not understand SHOULD be 501.
        if codings.hasOtherCoding {
            return .failure(.notImplemented("Only the chunked transfer coding is supported."))
        }
        guard codings.chunkedCount == 1 else {
            return .failure(.badRequest("The Transfer-Encoding header field is empty."))
        }
        return .success(.chunked)
    }
}

extension HTTPParser {
    /// The Transfer-Encoding fields of one request, combined in order as one list (RFC 9110 §5.3).
    struct TransferCodings: Sendable {
        /// Whether any Transfer-Encoding field was received.
        var isPresent = false
        /// How many times `chunked` was listed.
        var chunkedCount = 0
        /// Whether the last coding listed so far is `chunked`.
        var lastIsChunked = false
        /// Whether any coding other than `chunked` was listed.
        var hasOtherCoding = false

        /// Adds the codings of one field value; false when the value is not a valid coding list.
        ///
        /// RFC 9112 §6.1: Transfer-Encoding = #transfer-coding, transfer-coding =
        /// token *( OWS ";" OWS transfer-parameter ). Empty list elements are skipped
        /// (RFC 9110 §5.6.1.2); `chunked` takes no parameters.
        mutating func add(_ b: Bytes, _ start: Int, _ end: Int) -> Bool {
            isPresent = true
            var i = start
            while i < end {
                if b[i] == sp || b[i] == htab || b[i] == comma {
                    i += 1
                    continue
                }
                let codingStart = i
                while i < end, isTokenByte(b[i]) { i += 1 }
                guard i > codingStart else { return false }
                let isChunked = i - codingStart == 7 && matchesLowercase(b, at: codingStart, "chunked")
                while i < end, b[i] == sp || b[i] == htab { i += 1 }
                if i < end, b[i] == semicolon {
                    guard !isChunked, let next = Self.skipParameters(b, i, end) else { return false }
                    i = next
                }
                guard i == end || b[i] == comma else { return false }
                if isChunked {
                    chunkedCount += 1
                } else {
                    hasOtherCoding = true
                }
                lastIsChunked = isChunked
            }
            return true
        }

        /// The index of the "," or end after a coding's parameters; nil if a quoted string is unterminated.
        private static func skipParameters(_ b: Bytes, _ start: Int, _ end: Int) -> Int? {
            var i = start
            var inQuotes = false
            while i < end {
                let c = b[i]
                if inQuotes {
                    if c == backslash {
                        i += 1
                    } else if c == quote {
                        inQuotes = false
                    }
                } else if c == quote {
                    inQuotes = true
                } else if c == comma {
                    return i
                }
                i += 1
            }
            return inQuotes ? nil : end
        }
    }
}
