import BrokerCrypto

extension RESPParser {
    /// Starts a value from its type byte.
    mutating func readType(_ byte: UInt8) throws(RedisError) {
        let kind: LineKind
        switch byte {
        case UInt8(ascii: "+"): kind = .simpleString
        case UInt8(ascii: "-"): kind = .error
        case UInt8(ascii: ":"): kind = .integer
        case UInt8(ascii: "$"): kind = .bulkLength
        case UInt8(ascii: "*"): kind = .arrayLength
        default:
            try fail("unexpected type byte 0x\(Hex.encode([byte])): not a RESP2 reply (is this a Redis server?)")
        }
        line.removeAll(keepingCapacity: true)
        state = .line(kind)
    }

    /// Appends header-line bytes up to a CR; returns the index after what it consumed.
    mutating func readLine(_ kind: LineKind, _ input: UnsafeBufferPointer<UInt8>, from start: Int) throws(RedisError) -> Int {
        var end = start
        while end < input.count, input[end] != Self.cr, input[end] != Self.lf { end += 1 }
        guard line.count + (end - start) <= limits.maximumLineLength else {
            try fail("a header line is longer than \(limits.maximumLineLength) bytes")
        }
        line.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<end]))
        guard end < input.count else { return end }
        guard input[end] == Self.cr else { try fail("LF without CR in a header line") }
        state = .lineEnd(kind)
        return end + 1
    }

    /// Turns a complete header line into a value, or into the start of a bulk string or array.
    mutating func finishLine(_ kind: LineKind, into replies: inout [RESPValue]) throws(RedisError) {
        switch kind {
        case .simpleString:
            complete(.simpleString(String(decoding: line, as: UTF8.self)), into: &replies)
        case .error:
            complete(.error(String(decoding: line, as: UTF8.self)), into: &replies)
        case .integer:
            guard let value = Self.decimal(line) else { try fail("an integer reply is not a signed 64-bit decimal") }
            complete(.integer(value), into: &replies)
        case .bulkLength:
            let length = try length(limit: limits.maximumBulkLength, what: "bulk string")
            guard let length else { return complete(.bulk(nil), into: &replies) }
            bulk = []
            bulk.reserveCapacity(min(length, 1 << 20))
            state = length == 0 ? .bulkEnd(sawCR: false) : .bulkBody(remaining: length)
        case .arrayLength:
            let count = try length(limit: limits.maximumArrayLength, what: "array")
            guard let count else { return complete(.array(nil), into: &replies) }
            guard count > 0 else { return complete(.array([]), into: &replies) }
            guard open.count < limits.maximumDepth else {
                try fail("arrays nest deeper than \(limits.maximumDepth) levels")
            }
            var elements: [RESPValue] = []
            elements.reserveCapacity(min(count, 1024))
            open.append(OpenArray(remaining: count, elements: elements))
            state = .type
        }
    }

    /// The length in the header line: nil for -1 (the nil value), else 0 through `limit`.
    private mutating func length(limit: Int, what: String) throws(RedisError) -> Int? {
        guard let value = Self.decimal(line), value >= -1 else {
            try fail("the length of a \(what) is not a decimal of -1 or more")
        }
        guard value <= limit else { try fail("a \(what) declares \(value) items, over the limit of \(limit)") }
        return value == -1 ? nil : value
    }

    /// Hands `value` to the innermost open array, closing every array it completes; a top-level value is a reply.
    mutating func complete(_ value: RESPValue, into replies: inout [RESPValue]) {
        state = .type
        var value = value
        while !open.isEmpty {
            let last = open.count - 1
            open[last].elements.append(value)
            open[last].remaining -= 1
            guard open[last].remaining == 0 else { return }
            value = .array(open.removeLast().elements)
        }
        replies.append(value)
    }

    /// The value of an optional `-` and 1 to 19 decimal digits, or nil on anything else or overflow.
    static func decimal(_ bytes: [UInt8]) -> Int? {
        var digits = bytes[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19 else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = Int(byte - UInt8(ascii: "0"))
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }
}
