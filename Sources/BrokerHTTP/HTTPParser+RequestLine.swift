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
