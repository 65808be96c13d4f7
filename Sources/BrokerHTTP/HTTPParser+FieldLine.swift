#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// RFC 9112 §5: field-line = field-name ":" OWS field-value OWS, one per CRLF-terminated line.
extension HTTPParser.HeadScan {
    private typealias P = HTTPParser

    /// Finds the next line end within the header budget and processes the complete line.
    mutating func scanFields(_ b: HTTPParser.Bytes, limits: HTTPParserLimits) -> HTTPParser.HeadStep {
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
        let step = processFieldLine(b, lineStart, lineEnd, limits: limits)
        pos = lineEnd + 1
        lineStart = pos
        return step
    }

    /// Validates and records the line `b[start..<lf]`; an empty line completes the head.
    private mutating func processFieldLine(
        _ b: HTTPParser.Bytes, _ start: Int, _ lf: Int, limits: HTTPParserLimits
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
        fields.append((P.string(b, start, nameEnd), P.string(b, valueStart, valueEnd)))
        return .proceed
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
