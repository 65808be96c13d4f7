extension HTTPParser {
    /// The Transfer-Encoding fields of one request, combined in order as one list (RFC 9110 §5.3).
    struct TransferCodings: Sendable {
        /// Whether any Transfer-Encoding field was received.
        var isPresent = false
        /// How many times `chunked` was listed.
        var chunkedCount = 0
        /// Whether the last coding listed so far is `chunked`.
        var lastIsChunked = false
        /// Whether any coding other than `chunked` was listed.
        var hasOtherCoding = false

        /// Adds the codings of one field value; false when the value is not a valid coding list.
        ///
        /// RFC 9112 §6.1: Transfer-Encoding = #transfer-coding, transfer-coding =
        /// token *( OWS ";" OWS transfer-parameter ). Empty list elements are skipped
        /// (RFC 9110 §5.6.1.2); `chunked` takes no parameters.
        mutating func add(_ b: Bytes, _ start: Int, _ end: Int) -> Bool {
            isPresent = true
            var i = start
            while i < end {
                if b[i] == sp || b[i] == htab || b[i] == comma {
                    i += 1
                    continue
                }
                let codingStart = i
                while i < end, isTokenByte(b[i]) { i += 1 }
                guard i > codingStart else { return false }
                let isChunked = i - codingStart == 7 && matchesLowercase(b, at: codingStart, "chunked")
                while i < end, b[i] == sp || b[i] == htab { i += 1 }
                if i < end, b[i] == semicolon {
                    guard !isChunked, let next = Self.skipParameters(b, i, end) else { return false }
                    i = next
                }
                guard i == end || b[i] == comma else { return false }
                if isChunked {
                    chunkedCount += 1
                } else {
                    hasOtherCoding = true
                }
                lastIsChunked = isChunked
            }
            return true
        }

        /// The index of the "," or end after a coding's parameters; nil if a quoted string is unterminated.
        private static func skipParameters(_ b: Bytes, _ start: Int, _ end: Int) -> Int? {
            var i = start
            var inQuotes = false
            while i < end {
                let c = b[i]
                if inQuotes {
                    if c == backslash {
                        i += 1
                    } else if c == quote {
                        inQuotes = false
                    }
                } else if c == quote {
                    inQuotes = true
                } else if c == comma {
                    return i
                }
                i += 1
            }
            return inQuotes ? nil : end
        }
    }
}
