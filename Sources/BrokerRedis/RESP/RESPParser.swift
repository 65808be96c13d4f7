/// An incremental RESP2 reply parser: bytes in, complete replies out, no I/O.
///
/// Feed it whatever arrived, split anywhere; it keeps the partial value and
/// returns each reply as soon as its last byte is in. Bad input puts it in the
/// terminal `failed` state: the byte stream has lost its framing, so the
/// connection must be closed (and with it this parser).
struct RESPParser: Sendable {
    /// Where the parser is within the current value.
    ///
    /// Legal transitions: `type → line → lineEnd`, then by kind either back to
    /// `type` (a complete value, or an array header) or `bulkBody → bulkEnd → type`;
    /// any state `→ failed`, which is terminal.
    enum State: Sendable, Equatable {
        /// Waiting for the type byte (`+ - : $ *`) of the next value.
        case type
        /// Reading the header line of a value of this kind, up to its CR.
        case line(LineKind)
        /// Saw the CR ending a header line; LF must follow.
        case lineEnd(LineKind)
        /// Copying a bulk string's bytes, of which this many are still due.
        case bulkBody(remaining: Int)
        /// The bulk bytes are in and CR LF must follow; `sawCR` says whether CR came already.
        case bulkEnd(sawCR: Bool)
        /// Bad input was seen; every later call fails with this message.
        case failed(String)
    }

    /// What a header line introduces.
    enum LineKind: Sendable, Equatable {
        /// `+`: the line is the value.
        case simpleString
        /// `-`: the line is the error text.
        case error
        /// `:`: the line is a signed decimal.
        case integer
        /// `$`: the line is the byte count of a bulk string, or -1.
        case bulkLength
        /// `*`: the line is the element count of an array, or -1.
        case arrayLength
    }

    /// An array whose header was read and whose elements are still arriving.
    struct OpenArray: Sendable {
        /// Elements still due.
        var remaining: Int
        /// Elements complete so far.
        var elements: [RESPValue]
    }

    /// The bounds in force.
    let limits: RESPParserLimits
    /// The current state.
    var state: State = .type
    /// The header line read so far.
    var line: [UInt8] = []
    /// The bulk string bytes read so far.
    var bulk: [UInt8] = []
    /// The arrays being filled, outermost first.
    var open: [OpenArray] = []

    /// Creates a parser waiting for the first byte of a reply.
    init(limits: RESPParserLimits = RESPParserLimits()) {
        self.limits = limits
    }

    /// Whether no part of a reply has been read: the stream is at a value boundary.
    var isIdle: Bool {
        state == .type && open.isEmpty
    }

    /// Consumes every byte of `input` and returns the replies it completed, in order.
    ///
    /// Throws ``RedisError/protocolError(_:)`` at the first byte that breaks RESP2, and on every call after it.
    mutating func feed(_ input: UnsafeBufferPointer<UInt8>) throws(RedisError) -> [RESPValue] {
        var replies: [RESPValue] = []
        var index = 0
        if case .failed(let message) = state { throw .protocolError(message) }
        while index < input.count {
            switch state {
            case .type:
                try readType(input[index])
                index += 1
            case .line(let kind):
                index = try readLine(kind, input, from: index)
            case .lineEnd(let kind):
                // RESP2: every header line ends in CR LF.
                guard input[index] == Self.lf else { try fail("CR not followed by LF in a header line") }
                index += 1
                try finishLine(kind, into: &replies)
            case .bulkBody(let remaining):
                let count = min(remaining, input.count - index)
                bulk.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<index + count]))
                index += count
                state = count == remaining ? .bulkEnd(sawCR: false) : .bulkBody(remaining: remaining - count)
            case .bulkEnd(let sawCR):
                guard input[index] == (sawCR ? Self.lf : Self.cr) else {
                    try fail("a bulk string is longer than its declared length")
                }
                index += 1
                if sawCR {
                    complete(.bulk(bulk), into: &replies)
                    bulk = []
                } else {
                    state = .bulkEnd(sawCR: true)
                }
            case .failed(let message):
                throw .protocolError(message)
            }
        }
        return replies
    }

    /// Consumes `bytes` and returns the replies it completed; see ``feed(_:)-(UnsafeBufferPointer<UInt8>)``.
    mutating func feed(_ bytes: [UInt8]) throws(RedisError) -> [RESPValue] {
        var result: Result<[RESPValue], RedisError> = .success([])
        bytes.withUnsafeBufferPointer { buffer in
            do throws(RedisError) {
                result = .success(try feed(buffer))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// Enters the terminal failed state with `message` and throws it.
    mutating func fail(_ message: String) throws(RedisError) -> Never {
        state = .failed(message)
        line = []
        bulk = []
        open = []
        throw .protocolError(message)
    }

    /// Carriage return, the first byte of every RESP line end.
    static let cr = UInt8(ascii: "\r")
    /// Line feed, the second byte of every RESP line end.
    static let lf = UInt8(ascii: "\n")
}
