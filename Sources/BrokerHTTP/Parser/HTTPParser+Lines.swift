import BrokerCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// RFC 9112 §3: request-line = method SP request-target SP HTTP-version CRLF, single SPs only.
extension HTTPParser.HeadScan {
    private typealias P = HTTPParser

    /// The method token; a valid but unknown method, or one too long to be known, is 501.
    mutating func scanMethod(_ b: HTTPParser.Bytes) -> HTTPParser.HeadStep {
        let n = b.count
        var i = pos
        while i < n, P.isTokenByte(b[i]) {
            i += 1
            // RFC 9112 §3: a method longer than any known one is not implemented; stop buffering it.
            if i - tokenStart > P.maxMethodBytes {
                pos = i
                return .failure(.notImplemented("The request method is not implemented."))
            }
        }
        pos = i
        guard i < n else { return .needMore }
        guard b[i] == P.sp, i > tokenStart else {
            return .failure(.badRequest("The request line must be: method SP target SP version CRLF."))
        }
        guard let known = Self.knownMethod(b, tokenStart, i) else {
            // RFC 9112 §3: an unrecognised method SHOULD be answered 501.
            return .failure(.notImplemented("The request method is not implemented."))
        }
        method = known
        pos = i + 1
        tokenStart = pos
        phase = .target
        return .proceed
    }

    /// The request-target, bounded by `maxTargetBytes` on the bytes received so far.
    mutating func scanTarget(_ b: HTTPParser.Bytes, limits: HTTPParserLimits) -> HTTPParser.HeadStep {
        let n = b.count
        let cap = tokenStart + limits.maxTargetBytes
        let end = min(n, cap + 1)
        var i = pos
        while i < end, P.isTargetByte(b[i]) { i += 1 }
        pos = i
        // RFC 9112 §3: a target longer than the server will parse MUST get 414.
        if i > cap { return .failure(.uriTooLong) }
        guard i < n else { return .needMore }
        switch b[i] {
        case P.sp:
            guard i > tokenStart else {
                return .failure(.badRequest("The request line must be: method SP target SP version CRLF."))
            }
            if let error = parseTarget(b, tokenStart, i) { return .failure(error) }
            pos = i + 1
            tokenStart = pos
            phase = .version
            return .proceed
        case P.cr, P.lf:
            return .failure(.badRequest("The request line has no HTTP version."))
        default:
            return .failure(.badRequest("The request target contains an invalid byte."))
        }
    }

    /// The HTTP-version: exactly `HTTP/` DIGIT `.` DIGIT, then CR.
    mutating func scanVersion(_ b: HTTPParser.Bytes) -> HTTPParser.HeadStep {
        let n = b.count
        var i = pos
        while i < n, i - tokenStart < 8, b[i] != P.cr, b[i] != P.lf { i += 1 }
        pos = i
        guard i < n else { return .needMore }
        // RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive.
        guard i - tokenStart == 8, P.matches(b, at: tokenStart, "HTTP/"), b[tokenStart + 6] == 0x2E,
            case let major = b[tokenStart + 5] &- 0x30, major < 10,
            case let minor = b[tokenStart + 7] &- 0x30, minor < 10
        else { return .failure(.badRequest("The HTTP version is malformed.")) }
        // RFC 9112 §2.3 / RFC 9110 §15.6.6: only major version 1 is served.
        guard major == 1 else { return .failure(.versionNotSupported) }
        guard b[i] == P.cr else { return .failure(.badRequest("The request line must end with CRLF.")) }
        version = HTTPVersion(major: 1, minor: Int(minor))
        pos = i + 1
        phase = .requestLineLF
        return .proceed
    }

    /// The LF after the request line's CR.
    mutating func scanRequestLineLF(_ b: HTTPParser.Bytes) -> HTTPParser.HeadStep {
        guard pos < b.count else { return .needMore }
        // RFC 9112 §2.2: a bare CR is invalid.
        guard b[pos] == P.lf else { return .failure(.badRequest("A CR must be followed by LF.")) }
        pos += 1
        headerStart = pos
        lineStart = pos
        phase = .fields
        return .proceed
    }

    /// A known method from its bytes, by length then content; nil when unknown.
    static func knownMethod(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int) -> HTTPMethod? {
        switch end - start {
        case 3:
            if P.matches(b, at: start, "GET") { return .GET }
            if P.matches(b, at: start, "PUT") { return .PUT }
        case 4:
            if P.matches(b, at: start, "POST") { return .POST }
            if P.matches(b, at: start, "HEAD") { return .HEAD }
        case 5:
            if P.matches(b, at: start, "PATCH") { return .PATCH }
            if P.matches(b, at: start, "TRACE") { return .TRACE }
        case 6:
            if P.matches(b, at: start, "DELETE") { return .DELETE }
        case 7:
            if P.matches(b, at: start, "OPTIONS") { return .OPTIONS }
            if P.matches(b, at: start, "CONNECT") { return .CONNECT }
        default:
            break
        }
        return nil
    }
}

/// RFC 9112 §3.2: the forms of request-target this server accepts.
extension HTTPParser.HeadScan {

    /// Splits `b[start..<end]` into target, path and query, or says why it is invalid.
    ///
    /// Accepted: origin-form (`/path?query`), absolute-form with an `http`/`https`
    /// scheme (§3.2.2; the path is taken from it, `/` when empty), and asterisk-form
    /// for OPTIONS only (§3.2.4). Authority-form (§3.2.3, CONNECT) is not served.
    mutating func parseTarget(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int) -> HTTPParseError? {
        switch b[start] {
        case 0x2F:  // "/": origin-form, kept as its path and query only (``HTTPRequestHead/target`` joins them)
            target = nil
            splitPathAndQuery(b, start, end)
            return nil
        case 0x2A where end - start == 1:  // "*": asterisk-form
            guard method == .OPTIONS else {
                return .badRequest("The asterisk request target is only valid for OPTIONS.")
            }
            target = "*"
            path = "*"
            query = nil
            return nil
        default:
            return parseAbsoluteForm(b, start, end)
        }
    }

    /// RFC 9112 §3.2.2: absolute-form; the authority must be a valid host (no userinfo).
    private mutating func parseAbsoluteForm(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int) -> HTTPParseError? {
        let invalid = HTTPParseError.badRequest("The request target must be origin-form or an absolute http(s) URI.")
        var i = start
        if end - start > 7, P.matchesLowercase(b, at: start, "http://") {
            i = start + 7
        } else if end - start > 8, P.matchesLowercase(b, at: start, "https://") {
            i = start + 8
        } else {
            return invalid
        }
        let authorityStart = i
        while i < end, b[i] != 0x2F, b[i] != 0x3F { i += 1 }
        // RFC 9110 §4.2.1 / §4.2.4: an empty host or userinfo in an http URI is invalid.
        guard P.isValidHost(b, authorityStart, i) else { return invalid }
        target = P.string(b, start, end)
        if i == end {
            path = "/"
            query = nil
        } else if b[i] == 0x3F {
            path = "/"
            query = P.string(b, i + 1, end)
        } else {
            splitPathAndQuery(b, i, end)
        }
        return nil
    }

    /// Sets `path` and `query` from `b[start..<end]`, which begins with "/".
    private mutating func splitPathAndQuery(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int) {
        var q = start
        while q < end, b[q] != 0x3F { q += 1 }
        // Target bytes are visible ASCII (``HTTPParser/isTargetByte(_:)``).
        if q == end {
            path = P.asciiString(b, start, end)
            query = nil
        } else {
            path = P.asciiString(b, start, q)
            query = P.asciiString(b, q + 1, end)
        }
    }
}

/// RFC 9112 §5: field-line = field-name ":" OWS field-value OWS, one per CRLF-terminated line.
extension HTTPParser.HeadScan {

    /// Finds the next line end within the header budget and processes the complete line.
    mutating func scanFields(
        _ b: HTTPParser.Bytes, limits: HTTPParserLimits, kept: inout HTTPParser.KeptStrings
    ) -> HTTPParser.HeadStep {
        let n = b.count
        // The header section may use indices below `budgetEnd`; its blank line included.
        let budgetEnd = headerStart + limits.maxHeaderBytes
        let searchEnd = min(n, budgetEnd)
        guard pos < searchEnd, let base = b.baseAddress,
            let hit = memchr(base + pos, Int32(P.lf), searchEnd - pos)
        else {
            pos = max(pos, searchEnd)
            // RFC 6585 §5: a byte past the budget with no line end before it means the section is too large.
            return n > budgetEnd ? .failure(.headersTooLarge) : .needMore
        }
        let lineEnd = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        let step = processFieldLine(b, lineStart, lineEnd, limits: limits, kept: &kept)
        pos = lineEnd + 1
        lineStart = pos
        return step
    }

    /// Validates and records the line `b[start..<lf]`; an empty line completes the head.
    private mutating func processFieldLine(
        _ b: HTTPParser.Bytes, _ start: Int, _ lf: Int, limits: HTTPParserLimits, kept: inout HTTPParser.KeptStrings
    ) -> HTTPParser.HeadStep {
        // RFC 9112 §2.2: lines end with CRLF; a bare LF is rejected by this server's policy.
        guard lf > start, b[lf - 1] == P.cr else {
            return .failure(.badRequest("Lines must end with CRLF, not a bare LF."))
        }
        let end = lf - 1
        if end == start { return .complete(lf + 1) }
        // RFC 9112 §5.2 and §2.2: obs-fold, or whitespace before the first field, MUST be rejected.
        if b[start] == P.sp || b[start] == P.htab {
            return .failure(.badRequest("Folded header lines are not accepted."))
        }
        var i = start
        while i < end, P.isTokenByte(b[i]) { i += 1 }
        let nameEnd = i
        guard i < end, b[i] == P.colon, nameEnd > start else {
            if i < end, b[i] == P.sp || b[i] == P.htab {
                // RFC 9112 §5.1: whitespace between field name and colon MUST be answered 400.
                return .failure(.badRequest("Whitespace before the colon in a header field."))
            }
            return .failure(.badRequest("A header field name is invalid."))
        }
        i += 1
        while i < end, b[i] == P.sp || b[i] == P.htab { i += 1 }
        let valueStart = i
        // RFC 9110 §5.5 / RFC 9112 §2.2: NUL, bare CR, DEL and other controls (HTAB aside) are invalid.
        guard P.isFieldValue(b, valueStart, end) else {
            return .failure(.badRequest("A header field value contains a control byte."))
        }
        var valueEnd = end
        while valueEnd > valueStart, b[valueEnd - 1] == P.sp || b[valueEnd - 1] == P.htab { valueEnd -= 1 }
        guard fields.count < limits.maxHeaderCount else { return .failure(.headersTooLarge) }
        if let error = noteKnownField(b, start, nameEnd, valueStart, valueEnd) { return .failure(error) }
        if fields.isEmpty { fields.reserveCapacity(8) }
        let name = nameEnd - start > 15 ? long(b, start, nameEnd, &kept) : P.asciiString(b, start, nameEnd)
        let value = valueEnd - valueStart > 15 ? long(b, valueStart, valueEnd, &kept) : P.string(b, valueStart, valueEnd)
        fields.append((name, value))
        return .proceed
    }

    /// A name or value longer than 15 bytes, from `kept` when the previous message had the same bytes at its place.
    private mutating func long(
        _ b: HTTPParser.Bytes, _ start: Int, _ end: Int, _ kept: inout HTTPParser.KeptStrings
    ) -> String {
        defer { longStrings += 1 }
        return kept.string(b, start, end, place: longStrings)
    }

    /// Records what the framing and connection rules need from the fields that carry them.
    private mutating func noteKnownField(
        _ b: HTTPParser.Bytes, _ name: Int, _ nameEnd: Int, _ value: Int, _ valueEnd: Int
    ) -> HTTPParseError? {
        switch nameEnd - name {
        case 4 where P.matchesLowercase(b, at: name, "host"):
            hostCount += 1
            // RFC 9112 §3.2: more than one Host field, or an invalid value, MUST be answered 400.
            guard hostCount == 1 else { return .badRequest("More than one Host header field.") }
            guard P.isValidHost(b, value, valueEnd) else { return .badRequest("The Host header field is invalid.") }
        case 6 where P.matchesLowercase(b, at: name, "expect"):
            if valueEnd - value == 12, P.matchesLowercase(b, at: value, "100-continue") {
                expectsContinue = true
            } else {
                expectsOther = true
            }
        case 10 where P.matchesLowercase(b, at: name, "connection"):
            let options = P.connectionOptions(b, value, valueEnd)
            connectionClose = connectionClose || options.close
            connectionKeepAlive = connectionKeepAlive || options.keepAlive
        case 14 where P.matchesLowercase(b, at: name, "content-length"):
            // RFC 9112 §6.3 item 5 / RFC 9110 §8.6: one field of 1*DIGIT; lists and repeats are rejected.
            guard contentLength == nil else { return .badRequest("More than one Content-Length header field.") }
            guard let length = P.contentLength(b, value, valueEnd) else {
                return .badRequest("The Content-Length header field is invalid.")
            }
            contentLength = length
        case 17 where P.matchesLowercase(b, at: name, "transfer-encoding"):
            guard transferCodings.add(b, value, valueEnd) else {
                return .badRequest("The Transfer-Encoding header field is invalid.")
            }
        default:
            break
        }
        return nil
    }
}

/// Validators for the values of the fields that decide framing, routing and connection reuse.
extension HTTPParser {
    /// RFC 9112 §3.2 / RFC 3986 §3.2.2–3.2.3: uri-host [ ":" port ], without userinfo.
    ///
    /// Accepted hosts: a reg-name (unreserved, pct-encoded, sub-delims except ","),
    /// which covers IPv4 too, or an IPv6 literal in brackets. The port, when
    /// present, is 1–5 digits. An empty value is rejected.
    static func isValidHost(_ b: Bytes, _ start: Int, _ end: Int) -> Bool {
        guard start < end else { return false }
        var i = start
        if b[i] == 0x5B {  // "[" IPv6address "]"
            i += 1
            var colons = 0
            while i < end, b[i] != 0x5D {
                let c = b[i]
                guard Hex.value(of: c) != nil || c == colon || c == 0x2E else { return false }
                if c == colon { colons += 1 }
                i += 1
            }
            guard i < end, colons >= 2 else { return false }
            i += 1
        } else {
            while i < end, b[i] != colon {
                if b[i] == 0x25 {  // "%" HEXDIG HEXDIG
                    guard end - i > 2, Hex.value(of: b[i + 1]) != nil, Hex.value(of: b[i + 2]) != nil else { return false }
                    i += 3
                    continue
                }
                guard isRegNameByte(b[i]) else { return false }
                i += 1
            }
            guard i > start else { return false }
        }
        if i == end { return true }
        guard b[i] == colon, case let digits = end - i - 1, digits >= 1, digits <= 5 else { return false }
        for k in (i + 1)..<end where b[k] &- 0x30 > 9 { return false }
        return true
    }

    /// RFC 9110 §8.6: Content-Length = 1*DIGIT, here at most 18 digits so it always fits an Int.
    static func contentLength(_ b: Bytes, _ start: Int, _ end: Int) -> Int? {
        guard end > start, end - start <= 18 else { return nil }
        var value = 0
        for i in start..<end {
            let digit = b[i] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    /// RFC 9110 §7.6.1: whether a Connection value lists `close` and/or `keep-alive` (case-insensitive).
    static func connectionOptions(_ b: Bytes, _ start: Int, _ end: Int) -> (close: Bool, keepAlive: Bool) {
        var close = false
        var keepAlive = false
        var i = start
        while i < end {
            while i < end, b[i] == sp || b[i] == htab || b[i] == comma { i += 1 }
            let optionStart = i
            while i < end, b[i] != comma { i += 1 }
            var optionEnd = i
            while optionEnd > optionStart, b[optionEnd - 1] == sp || b[optionEnd - 1] == htab { optionEnd -= 1 }
            switch optionEnd - optionStart {
            case 5 where matchesLowercase(b, at: optionStart, "close"): close = true
            case 10 where matchesLowercase(b, at: optionStart, "keep-alive"): keepAlive = true
            default: break
            }
        }
        return (close, keepAlive)
    }
}

extension HTTPParser {
    /// The names and values longer than a small string (15 bytes) of a connection's previous message, in order, which
    /// the same field of the next message takes again instead of making a string of its own.
    ///
    /// A client sends the same long field (an `Authorization` value) on every request of a connection; comparing the
    /// bytes costs a fraction of making a string (an allocation and a UTF-8 check) and later freeing it. A string of
    /// up to 15 bytes is made inline without an allocation, at about the cost of the comparison, so is not kept.
    /// Only the bytes decide: the fields were validated as before, and the same bytes give the same string (the kept
    /// string's UTF-8 is valid, so decoding them would repair nothing).
    struct KeptStrings: Sendable {
        /// The most strings kept.
        static let capacity = 8
        /// The longest string kept, in bytes: an idle connection holds at most `capacity` of them (4 KiB), whatever
        /// its last request carried. An API key or a short bearer token fits; a longer value is made each time.
        static let longest = 512
        /// The previous message's long strings, in order; a place past them is filled by the current message.
        var strings: [String] = []

        /// `b[start..<end]` as the long string at `place` of its message: the kept one when its bytes are the same,
        /// else a new one, kept for the next message in its place.
        mutating func string(_ b: Bytes, _ start: Int, _ end: Int, place: Int) -> String {
            let count = end - start
            if place < strings.count, let base = b.baseAddress {
                var kept = strings[place]
                if kept.utf8.count == count, kept.withUTF8({ memcmp($0.baseAddress!, base + start, count) == 0 }) {
                    return kept
                }
                let made = HTTPParser.string(b, start, end)
                strings[place] = count <= Self.longest ? made : ""
                return made
            }
            let made = HTTPParser.string(b, start, end)
            // An empty string holds the place of one too long to keep: it matches no long value.
            if place == strings.count, place < Self.capacity { strings.append(count <= Self.longest ? made : "") }
            return made
        }
    }
}
