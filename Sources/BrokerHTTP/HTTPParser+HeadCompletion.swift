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

        // RFC 9110 §15.5.14: refuse an announced body over the limit before reading any of it.
        if case .length(let size) = framing, size > limits.maxBodyBytes { return fail(.contentTooLarge) }

        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive".
        let keepAlive = isHTTP10
            ? head.connectionKeepAlive && !head.connectionClose
            : !head.connectionClose

        let request = HTTPRequestHead(
            method: head.method, target: head.target, path: head.path, query: head.query,
            version: head.version, headers: HTTPHeaders(head.fields), keepAlive: keepAlive,
            expectContinue: !isHTTP10 && head.expectsContinue, framing: framing)

        switch framing {
        case .none, .length(0):
            state = .emptyBody
        case .length(let size):
            // Reserve a bounded amount: an announced size is only a claim.
            body.reserveCapacity(min(size, 64 * 1024))
            state = .fixedBody(remaining: size)
        case .chunked:
            chunk = ChunkScan()
            state = .chunkedBody
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
