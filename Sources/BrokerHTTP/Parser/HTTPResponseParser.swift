#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The response mode of the HTTP/1.1 parser (RFC 9112): bytes of an upstream's answer in, events out, no I/O.
///
/// It shares the request parser's field-line scanner, Transfer-Encoding rules and
/// chunked decoder, and is as strict: obs-fold, bare LF, whitespace before a colon,
/// a Content-Length list, Content-Length with Transfer-Encoding, a transfer coding
/// other than `chunked`, and a head over the limits are all errors. Unlike the
/// request side it never gathers the body: each `.body` event names a run of the
/// caller's own bytes, so the caller decides how much it holds (the response cap is
/// enforced where bytes arrive). Call ``begin(headRequest:)`` before each response, then
/// `parse` while the event is not `.needMore`, dropping `consumed` bytes each time;
/// at end of input call ``finish()``.
public struct HTTPResponseParser: Sendable {
    /// What one call to `parse` found.
    public enum Event: Sendable, Equatable {
        /// More bytes are needed before anything else can be said.
        case needMore
        /// The status line and headers of the final (non-1xx) response are complete and valid.
        case head(status: Int)
        /// These bytes of the input (offsets into what was passed) are body bytes, decoded from any chunked framing.
        case body(Range<Int>)
        /// The body is complete; the parser waits for ``begin(headRequest:)``.
        case end
        /// The response is malformed; the connection must be closed. The parser stays failed.
        case error(HTTPParseError)
    }

    /// Where the parser is in the current response.
    ///
    /// Legal transitions: `idle → head` (begin), `head → head` (a 1xx skipped),
    /// `head → ending | fixedBody | chunkedBody | untilClose`, each body state `→ ending → idle`,
    /// and any state `→ failed`, which is terminal.
    enum State: Sendable {
        /// No response is expected: `begin` has not been called since the last `.end`.
        case idle
        /// Scanning the status line (`statusLine`) or the header section (`scan`).
        case head
        /// The body is complete; `.end` comes next.
        case ending
        /// Reading a Content-Length body of which this many bytes are still due.
        case fixedBody(remaining: Int)
        /// Reading a chunked body; progress is in `chunk`.
        case chunkedBody
        /// Reading a body delimited by the end of the connection.
        case untilClose
        /// The response was malformed; every later call returns this error.
        case failed(HTTPParseError)
    }

    /// The limits in force: the status line is held to `maxTargetBytes`, the header section to
    /// `maxHeaderBytes` and `maxHeaderCount`, each chunk's size line and the trailers to `maxChunkMetadataBytes`.
    public let limits: HTTPParserLimits
    var state: State = .idle
    /// Whether the status line has been read for the head being scanned.
    var statusLineDone = false
    /// Progress through the header section, shared with the request parser.
    var scan = HTTPParser.HeadScan()
    /// The long names and values of the previous response on this connection, as the request parser keeps them.
    var kept = HTTPParser.KeptStrings()
    /// Progress through a chunked body, shared with the request parser.
    var chunk = HTTPParser.ChunkScan()
    /// Whether the request being answered was HEAD (RFC 9112 §6.3 item 1: no body whatever the fields say).
    var isHeadRequest = false
    /// Interim (1xx) responses skipped for the current request.
    var interimCount = 0
    /// The version, status and reason of the status line read for the head being scanned.
    var pendingStatus: (version: HTTPVersion, status: Int, reason: String) = (.http1_1, 0, "")
    /// The head of the final response, once `.head` was returned.
    public private(set) var head: HTTPResponseHead?

    /// Most interim responses skipped before the answer counts as malformed.
    static let maxInterimResponses = 16

    /// Creates a parser that waits for ``begin(headRequest:)``.
    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Expects the response to a request; only a HEAD request changes the framing.
    public mutating func begin(headRequest: Bool) {
        guard case .idle = state else { return }
        isHeadRequest = headRequest
        interimCount = 0
        head = nil
        resetHead()
        state = .head
    }

    /// Whether the parser is between responses (after `.end`, before `begin`).
    public var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Whether any byte of the current response has been scanned yet; false before the first byte.
    public var hasStarted: Bool {
        switch state {
        case .idle: return false
        case .head: return scan.pos > 0 || statusLineDone || interimCount > 0
        case .ending, .fixedBody, .chunkedBody, .untilClose, .failed: return true
        }
    }

    /// Parses from `bytes`, which begin at the first byte not consumed by earlier calls.
    public mutating func parse(_ bytes: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        let input = bytes.assumingMemoryBound(to: UInt8.self)
        switch state {
        case .idle:
            return input.isEmpty ? (.needMore, 0) : fail(.badResponse("Bytes arrived when no response was due."))
        case .head: return parseHeads(input)
        case .ending:
            state = .idle
            return (.end, 0)
        case .fixedBody(let remaining): return parseFixedBody(input, remaining: remaining)
        case .chunkedBody: return parseChunkedBody(input)
        case .untilClose: return input.isEmpty ? (.needMore, 0) : (.body(0..<input.count), input.count)
        case .failed(let error): return (.error(error), 0)
        }
    }

    /// The peer closed its side: ends a body delimited by the close, and fails anything else unfinished.
    public mutating func finish() -> Event {
        switch state {
        case .idle: return .end
        case .untilClose, .ending:
            state = .idle
            return .end
        case .failed(let error): return .error(error)
        case .head, .fixedBody, .chunkedBody:
            // RFC 9112 §8: a message closed before its framing says it is complete is incomplete.
            return fail(.badResponse("The connection closed before the response was complete.")).event
        }
    }

    mutating func fail(_ error: HTTPParseError) -> (event: Event, consumed: Int) {
        state = .failed(error)
        scan = HTTPParser.HeadScan()
        chunk = HTTPParser.ChunkScan()
        return (.error(error), 0)
    }

    private mutating func resetHead() {
        scan = HTTPParser.HeadScan()
        statusLineDone = false
    }
}

/// RFC 9112 §4 and §5: the status line and header section; interim (1xx) responses are skipped.
extension HTTPResponseParser {
    private typealias P = HTTPParser

    /// Scans heads from `b`, skipping interim responses, until a final head, more input, or an error.
    mutating func parseHeads(_ b: HTTPParser.Bytes) -> (event: Event, consumed: Int) {
        var offset = 0
        while true {
            let rest = HTTPParser.Bytes(rebasing: b[offset...])
            let (event, consumed) = parseOneHead(rest)
            switch event {
            case .needMore where consumed > 0:
                // An interim response ended here; scan on from its end.
                offset += consumed
            case .needMore, .error: return (event, offset + consumed)
            case .head: return (event, offset + consumed)
            case .body, .end: return (event, offset + consumed)
            }
        }
    }

    /// One head: `.needMore` with `consumed > 0` means an interim response of that length was skipped.
    private mutating func parseOneHead(_ b: HTTPParser.Bytes) -> (event: Event, consumed: Int) {
        if b.count < scan.pos { resetHead() }
        if !statusLineDone {
            switch scanStatusLine(b) {
            case .needMore: return (.needMore, 0)
            case .failure(let error): return fail(error)
            case .proceed, .complete: break
            }
        }
        while true {
            switch scan.advance(b, limits: limits, kept: &kept) {
            case .proceed: continue
            case .needMore: return (.needMore, 0)
            case .failure(let error):
                if error == .headersTooLarge { return fail(.badResponse("The response header section is too large.")) }
                return fail(.badResponse(error.message))
            case .complete(let length): return completeHead(length: length)
            }
        }
    }

    /// RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF, held to `maxTargetBytes`.
    private mutating func scanStatusLine(_ b: HTTPParser.Bytes) -> HTTPParser.HeadStep {
        let n = b.count
        let cap = limits.maxTargetBytes
        let searchEnd = min(n, cap)
        guard scan.pos < searchEnd, let base = b.baseAddress,
            let hit = memchr(base + scan.pos, Int32(P.lf), searchEnd - scan.pos)
        else {
            scan.pos = max(scan.pos, searchEnd)
            return n >= cap ? .failure(.badResponse("The status line is too long.")) : .needMore
        }
        let lf = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        // RFC 9112 §2.2: lines end with CRLF; a bare LF is rejected, as on the request side.
        guard lf > 0, b[lf - 1] == P.cr else { return .failure(.badResponse("Lines must end with CRLF, not a bare LF.")) }
        let end = lf - 1
        // RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive; then SP and three digits.
        guard end >= 12, P.matches(b, at: 0, "HTTP/"), b[6] == 0x2E, b[8] == P.sp,
            case let major = b[5] &- 0x30, major < 10, case let minor = b[7] &- 0x30, minor < 10
        else { return .failure(.badResponse("The status line is malformed.")) }
        guard major == 1 else { return .failure(.badResponse("Only HTTP/1.x responses are understood.")) }
        var status = 0
        for i in 9..<12 {
            let digit = b[i] &- 0x30
            guard digit < 10 else { return .failure(.badResponse("The status code is malformed.")) }
            status = status * 10 + Int(digit)
        }
        // RFC 9110 §15: status codes are 100–599.
        guard status >= 100, status <= 599 else { return .failure(.badResponse("The status code is out of range.")) }
        var reason = ""
        if end > 12 {
            // RFC 9112 §4: reason-phrase = 1*( HTAB / SP / VCHAR / obs-text ), after one SP.
            guard b[12] == P.sp, P.isFieldValue(b, 13, end) else {
                return .failure(.badResponse("The reason phrase is malformed."))
            }
            reason = P.string(b, 13, end)
        }
        pendingStatus = (HTTPVersion(major: 1, minor: Int(minor)), status, reason)
        statusLineDone = true
        scan.pos = lf + 1
        scan.headerStart = lf + 1
        scan.lineStart = lf + 1
        scan.phase = .fields
        return .proceed
    }

    /// RFC 9112 §6.3: decides the framing of a complete head of `length` bytes.
    private mutating func completeHead(length: Int) -> (event: Event, consumed: Int) {
        var fields = HTTPParser.HeadScan()
        swap(&fields, &scan)
        statusLineDone = false
        let (version, status, reason) = pendingStatus
        if status < 200 {
            // RFC 9110 §15.2.2: this client never asks to switch protocols.
            if status == 101 { return fail(.badResponse("An unrequested protocol switch (101).")) }
            // RFC 9112 §6.3 item 1 / RFC 9110 §15.2: an interim response has no body; the final one follows.
            interimCount += 1
            guard interimCount <= Self.maxInterimResponses else { return fail(.badResponse("Too many interim responses.")) }
            return (.needMore, length)
        }
        let isHTTP10 = version.minor == 0
        let codings = fields.transferCodings
        var framing: HTTPResponseHead.BodyFraming
        if codings.isPresent {
            // RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means faulty framing.
            if isHTTP10 { return fail(.badResponse("Transfer-Encoding in an HTTP/1.0 response.")) }
            // RFC 9112 §6.3 item 3: both fields are a smuggling vector; a strict client refuses them.
            if fields.contentLength != nil {
                return fail(.badResponse("Content-Length and Transfer-Encoding must not both be sent."))
            }
            // Only `chunked`, once: any other transfer coding would have to be decoded, which this client does not do.
            guard codings.chunkedCount == 1, codings.lastIsChunked, !codings.hasOtherCoding else {
                return fail(.badResponse("Only the chunked transfer coding is understood."))
            }
            framing = .chunked
        } else if let declared = fields.contentLength {
            framing = .length(declared)
        } else {
            framing = .untilClose
        }
        // RFC 9112 §6.3 item 1: HEAD, 204 and 304 answers end at the head whatever the fields say.
        if isHeadRequest || status == 204 || status == 304 { framing = .none }
        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive"; a close-delimited body never.
        var keepAlive = isHTTP10 ? fields.connectionKeepAlive && !fields.connectionClose : !fields.connectionClose
        if framing == .untilClose { keepAlive = false }
        head = HTTPResponseHead(
            version: version, status: status, reason: reason, headers: HTTPHeaders(fields.fields), keepAlive: keepAlive,
            framing: framing)
        switch framing {
        case .none, .length(0): state = .ending
        case .length(let size): state = .fixedBody(remaining: size)
        case .chunked:
            chunk = HTTPParser.ChunkScan()
            state = .chunkedBody
        case .untilClose: state = .untilClose
        }
        return (.head(status: status), length)
    }
}

/// RFC 9112 §6.2 and §7.1: the body, handed out as runs of the caller's bytes.
extension HTTPResponseParser {
    mutating func parseFixedBody(_ b: HTTPParser.Bytes, remaining: Int) -> (event: Event, consumed: Int) {
        let take = min(remaining, b.count)
        guard take > 0 else { return (.needMore, 0) }
        state = take == remaining ? .ending : .fixedBody(remaining: remaining - take)
        return (.body(0..<take), take)
    }

    /// Reads framing bytes up to the next run of chunk data, which it hands out, or to the end of the body.
    mutating func parseChunkedBody(_ b: HTTPParser.Bytes) -> (event: Event, consumed: Int) {
        let n = b.count
        var i = 0
        while i < n {
            if case .data = chunk.phase {
                let take = min(chunk.remaining, n - i)
                chunk.remaining -= take
                if chunk.remaining == 0 { chunk.phase = .dataCR }
                return (.body(i..<(i + take)), i + take)
            }
            switch chunk.advance(b[i], limits: limits) {
            case .proceed:
                break
            case .sizeLine(let size):
                // RFC 9112 §7.1.1: the metadata budget is per chunk here, so a long streamed body of many
                // chunks is not refused; an extension flood within one size line still is.
                chunk.metadataBytes = 0
                if size == 0 {
                    chunk.phase = .trailerLineStart
                } else {
                    chunk.remaining = size
                    chunk.phase = .data
                }
            case .done:
                state = .idle
                return (.end, i + 1)
            case .failure(let error):
                return fail(HTTPParseError.badResponse(error.message))
            }
            i += 1
        }
        return (.needMore, n)
    }
}
