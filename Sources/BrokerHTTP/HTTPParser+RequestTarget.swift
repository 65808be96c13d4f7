/// RFC 9112 §3.2: the forms of request-target this server accepts.
extension HTTPParser.HeadScan {
    private typealias P = HTTPParser

    /// Splits `b[start..<end]` into target, path and query, or says why it is invalid.
    ///
    /// Accepted: origin-form (`/path?query`), absolute-form with an `http`/`https`
    /// scheme (§3.2.2; the path is taken from it, `/` when empty), and asterisk-form
    /// for OPTIONS only (§3.2.4). Authority-form (§3.2.3, CONNECT) is not served.
    mutating func parseTarget(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int) -> HTTPParseError? {
        switch b[start] {
        case 0x2F: // "/": origin-form
            target = P.string(b, start, end)
            splitPathAndQuery(b, start, end, wholeTarget: true)
            return nil
        case 0x2A where end - start == 1: // "*": asterisk-form
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
            splitPathAndQuery(b, i, end, wholeTarget: false)
        }
        return nil
    }

    /// Sets `path` and `query` from `b[start..<end]`, which begins with "/".
    private mutating func splitPathAndQuery(_ b: HTTPParser.Bytes, _ start: Int, _ end: Int, wholeTarget: Bool) {
        var q = start
        while q < end, b[q] != 0x3F { q += 1 }
        if q == end {
            path = wholeTarget ? target : P.string(b, start, end)
            query = nil
        } else {
            path = P.string(b, start, q)
            query = P.string(b, q + 1, end)
        }
    }
}
