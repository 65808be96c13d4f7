/// RFC 9112 §7.1 and §7.1.1: chunk = chunk-size [ chunk-ext ] CRLF, where
/// chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ) and
/// ext-val = token / quoted-string. Unknown extensions are ignored.
extension HTTPParser.ChunkScan {
    private typealias P = HTTPParser

    /// The verdict on a malformed chunk-size line; built only when needed.
    private static var invalidSizeLine: HTTPParser.ChunkStep {
        .failure(.badRequest("A chunk-size line is malformed."))
    }

    /// Reads one byte of a chunk-size line.
    mutating func advanceSizeLine(_ c: UInt8) -> HTTPParser.ChunkStep {
        let isBWS = c == P.sp || c == P.htab
        switch phase {
        case .size:
            if let value = P.hexValue(c) {
                // RFC 9112 §7.1: guard against overflow; at most 16 digits, and never past Int.max.
                guard digits < 16, size <= Int.max >> 4 else {
                    return .failure(.badRequest("The chunk size is too large."))
                }
                digits += 1
                size = size << 4 | value
            } else if digits == 0 {
                return Self.invalidSizeLine
            } else if c == P.semicolon {
                phase = .extNameStart
            } else if c == P.cr {
                phase = .sizeLF
            } else if isBWS {
                phase = .sizeBWS
            } else {
                return Self.invalidSizeLine
            }
        case .sizeBWS:
            if c == P.semicolon { phase = .extNameStart } else if !isBWS { return Self.invalidSizeLine }
        case .extNameStart:
            if P.isTokenByte(c) { phase = .extName } else if !isBWS { return Self.invalidSizeLine }
        case .extName:
            if c == P.equals {
                phase = .extValueStart
            } else if c == P.semicolon {
                phase = .extNameStart
            } else if c == P.cr {
                phase = .sizeLF
            } else if isBWS {
                phase = .extNameBWS
            } else if !P.isTokenByte(c) {
                return Self.invalidSizeLine
            }
        case .extNameBWS:
            if c == P.equals {
                phase = .extValueStart
            } else if c == P.semicolon {
                phase = .extNameStart
            } else if !isBWS {
                return Self.invalidSizeLine
            }
        case .extValueStart:
            if c == P.quote {
                phase = .extQuoted
            } else if P.isTokenByte(c) {
                phase = .extToken
            } else if !isBWS {
                return Self.invalidSizeLine
            }
        case .extToken:
            if c == P.semicolon {
                phase = .extNameStart
            } else if c == P.cr {
                phase = .sizeLF
            } else if isBWS {
                phase = .extValueBWS
            } else if !P.isTokenByte(c) {
                return Self.invalidSizeLine
            }
        case .extQuoted:
            // RFC 9110 §5.6.4: qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text.
            if c == P.quote {
                phase = .extAfterQuoted
            } else if c == P.backslash {
                phase = .extQuotedEscape
            } else if !P.isFieldValueByte(c) {
                return Self.invalidSizeLine
            }
        case .extQuotedEscape:
            // RFC 9110 §5.6.4: quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ).
            guard P.isFieldValueByte(c) else { return Self.invalidSizeLine }
            phase = .extQuoted
        case .extAfterQuoted:
            if c == P.semicolon {
                phase = .extNameStart
            } else if c == P.cr {
                phase = .sizeLF
            } else if isBWS {
                phase = .extValueBWS
            } else {
                return Self.invalidSizeLine
            }
        case .extValueBWS:
            if c == P.semicolon { phase = .extNameStart } else if !isBWS { return Self.invalidSizeLine }
        case .sizeLF:
            // RFC 9112 §7.1: chunk lines end with CRLF; a bare CR is invalid.
            guard c == P.lf else { return Self.invalidSizeLine }
            return .sizeLine(size)
        case .data, .dataCR, .dataLF, .trailerLineStart, .trailerName, .trailerValue, .trailerLF, .endLF:
            return Self.invalidSizeLine
        }
        return .proceed
    }
}
