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
        if b[i] == 0x5B { // "[" IPv6address "]"
            i += 1
            var colons = 0
            while i < end, b[i] != 0x5D {
                let c = b[i]
                guard hexValue(c) != nil || c == colon || c == 0x2E else { return false }
                if c == colon { colons += 1 }
                i += 1
            }
            guard i < end, colons >= 2 else { return false }
            i += 1
        } else {
            while i < end, b[i] != colon {
                if b[i] == 0x25 { // "%" HEXDIG HEXDIG
                    guard end - i > 2, hexValue(b[i + 1]) != nil, hexValue(b[i + 2]) != nil else { return false }
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
