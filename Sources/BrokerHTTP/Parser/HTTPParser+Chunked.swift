import BrokerCrypto

/// RFC 9112 §7.1: the chunked transfer coding, decoded as bytes arrive.
extension HTTPParser {
    /// Decodes as much of a chunked body as `b` holds; every byte examined is consumed.
    mutating func parseChunkedBody(_ b: Bytes) -> (event: Event, consumed: Int) {
        let n = b.count
        var i = 0
        while i < n {
            if case .data = chunk.phase {
                let take = min(chunk.remaining, n - i)
                let part = Bytes(rebasing: b[i..<(i + take)])
                i += take
                chunk.remaining -= take
                if chunk.remaining == 0 { chunk.phase = .dataCR }
                if streamsBody {
                    streamedCount += take
                    return (.bodyPart(Array(part)), i)
                }
                body.append(contentsOf: part)
                continue
            }
            switch chunk.advance(b[i], limits: limits) {
            case .proceed:
                break
            case .sizeLine(let size):
                if size == 0 {
                    chunk.phase = .trailerLineStart
                } else if size > bodyLimit - (streamsBody ? streamedCount : body.count) {
                    // RFC 9110 §15.5.14: the decoded body would pass the limit; refuse before reading it.
                    return fail(.contentTooLarge)
                } else {
                    chunk.remaining = size
                    chunk.phase = .data
                }
            case .done:
                return endRequest(consumed: i + 1)
            case .failure(let error):
                return fail(error)
            }
            i += 1
        }
        return (.needMore, n)
    }
}

extension HTTPParser.ChunkScan {
    private typealias P = HTTPParser

    /// The verdict on a malformed trailer line; built only when needed.
    private static var invalidTrailer: HTTPParser.ChunkStep {
        .failure(.badRequest("A trailer field is malformed."))
    }

    /// Reads one framing byte (never chunk data) and says what it meant.
    mutating func advance(_ c: UInt8, limits: HTTPParserLimits) -> HTTPParser.ChunkStep {
        switch phase {
        case .data, .dataCR, .dataLF:
            return advanceAfterData(c)
        case .trailerLineStart, .trailerName, .trailerValue, .trailerLF, .endLF:
            return countMetadata(limits) ?? advanceTrailer(c)
        case .size, .sizeBWS, .extNameStart, .extName, .extNameBWS, .extValueStart, .extToken,
            .extQuoted, .extQuotedEscape, .extAfterQuoted, .extValueBWS, .sizeLF:
            return countMetadata(limits) ?? advanceSizeLine(c)
        }
    }

    /// RFC 9112 §7.1.1: size lines, extensions and trailers share one budget; over it → 413.
    private mutating func countMetadata(_ limits: HTTPParserLimits) -> HTTPParser.ChunkStep? {
        metadataBytes += 1
        return metadataBytes > limits.maxChunkMetadataBytes ? .failure(.contentTooLarge) : nil
    }

    /// RFC 9112 §7.1: chunk data is followed by exactly CRLF.
    private mutating func advanceAfterData(_ c: UInt8) -> HTTPParser.ChunkStep {
        switch phase {
        case .dataCR where c == P.cr:
            phase = .dataLF
        case .dataLF where c == P.lf:
            phase = .size
            digits = 0
            size = 0
        default:
            return .failure(.badRequest("Chunk data must be followed by CRLF."))
        }
        return .proceed
    }

    /// RFC 9112 §7.1.2: trailer fields use the field-line syntax and are discarded, never merged.
    private mutating func advanceTrailer(_ c: UInt8) -> HTTPParser.ChunkStep {
        switch phase {
        case .trailerLineStart:
            if c == P.cr {
                phase = .endLF
            } else if P.isTokenByte(c) {
                phase = .trailerName
            } else {
                return Self.invalidTrailer
            }
        case .trailerName:
            if c == P.colon {
                phase = .trailerValue
            } else if !P.isTokenByte(c) {
                return Self.invalidTrailer
            }
        case .trailerValue:
            if c == P.cr {
                phase = .trailerLF
            } else if !P.isFieldValueByte(c) {
                return Self.invalidTrailer
            }
        case .trailerLF:
            guard c == P.lf else { return Self.invalidTrailer }
            phase = .trailerLineStart
        case .endLF:
            guard c == P.lf else { return Self.invalidTrailer }
            return .done
        default:
            return Self.invalidTrailer
        }
        return .proceed
    }
}

extension HTTPParser {
    /// What one byte of chunked framing meant.
    enum ChunkStep {
        /// Keep going.
        case proceed
        /// A chunk-size line ended; this many data bytes follow (0: the last chunk).
        case sizeLine(Int)
        /// The trailer section ended; the body is complete.
        case done
        /// The framing is malformed or over budget.
        case failure(HTTPParseError)
    }

    /// Progress through a chunked body's framing (RFC 9112 §7.1), one byte at a time outside the data.
    struct ChunkScan: Sendable {
        /// The part of the chunked framing being read.
        enum Phase: Sendable {
            /// chunk-size hex digits.
            case size
            /// BWS after the size; only ";" may follow.
            case sizeBWS
            /// After ";" (and BWS): an extension name must start.
            case extNameStart
            /// Inside an extension name.
            case extName
            /// BWS after an extension name; "=" or ";" may follow.
            case extNameBWS
            /// After "=" (and BWS): a token or quoted-string must start.
            case extValueStart
            /// Inside a token extension value.
            case extToken
            /// Inside a quoted-string extension value.
            case extQuoted
            /// After a backslash inside a quoted-string.
            case extQuotedEscape
            /// Right after a closing quote.
            case extAfterQuoted
            /// BWS after an extension value; only ";" may follow.
            case extValueBWS
            /// The CR of a chunk-size line was read; LF must follow.
            case sizeLF
            /// Inside chunk data; `remaining` bytes are due.
            case data
            /// Chunk data ended; CR must follow.
            case dataCR
            /// The CR after chunk data was read; LF must follow.
            case dataLF
            /// At the start of a trailer line, or of the final empty line.
            case trailerLineStart
            /// Inside a trailer field name.
            case trailerName
            /// Inside a trailer field value.
            case trailerValue
            /// The CR of a trailer line was read; LF must follow.
            case trailerLF
            /// The CR of the final empty line was read; LF must follow.
            case endLF
        }

        /// The current phase.
        var phase: Phase = .size
        /// Hex digits of the current chunk-size read so far.
        var digits = 0
        /// The current chunk-size.
        var size = 0
        /// Data bytes of the current chunk still due.
        var remaining = 0
        /// Bytes of size lines, extensions and trailers so far (RFC 9112 §7.1.1 budget).
        var metadataBytes = 0
    }
}

/// RFC 9112 §7.1 and §7.1.1: chunk = chunk-size [ chunk-ext ] CRLF, where
/// chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ) and
/// ext-val = token / quoted-string. Unknown extensions are ignored.
extension HTTPParser.ChunkScan {

    /// The verdict on a malformed chunk-size line; built only when needed.
    private static var invalidSizeLine: HTTPParser.ChunkStep {
        .failure(.badRequest("A chunk-size line is malformed."))
    }

    /// Reads one byte of a chunk-size line.
    mutating func advanceSizeLine(_ c: UInt8) -> HTTPParser.ChunkStep {
        let isBWS = c == P.sp || c == P.htab
        switch phase {
        case .size:
            if let value = Hex.value(of: c) {
                // RFC 9112 §7.1: guard against overflow; at most 16 digits, and never past Int.max.
                guard digits < 16, size <= Int.max >> 4 else {
                    return .failure(.badRequest("The chunk size is too large."))
                }
                digits += 1
                size = size << 4 | Int(value)
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
