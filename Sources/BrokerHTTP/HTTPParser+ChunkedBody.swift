/// RFC 9112 §7.1: the chunked transfer coding, decoded as bytes arrive.
extension HTTPParser {
    /// Decodes as much of a chunked body as `b` holds; every byte examined is consumed.
    mutating func parseChunkedBody(_ b: Bytes) -> (event: Event, consumed: Int) {
        let n = b.count
        var i = 0
        while i < n {
            if case .data = chunk.phase {
                let take = min(chunk.remaining, n - i)
                body.append(contentsOf: Bytes(rebasing: b[i..<(i + take)]))
                i += take
                chunk.remaining -= take
                if chunk.remaining == 0 { chunk.phase = .dataCR }
                continue
            }
            switch chunk.advance(b[i], limits: limits) {
            case .proceed:
                break
            case .sizeLine(let size):
                if size == 0 {
                    chunk.phase = .trailerLineStart
                } else if size > limits.maxBodyBytes - body.count {
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
