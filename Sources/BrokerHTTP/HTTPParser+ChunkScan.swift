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
