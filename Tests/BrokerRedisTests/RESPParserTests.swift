import Testing

@testable import BrokerRedis

/// The RESP2 reply parser: every type, nesting, nil values, any split of the input, and refusal of bad input.
struct RESPParserTests {
    /// One stream holding every reply type, nested arrays and both nil forms.
    static let stream = Array(
        ("+OK\r\n" + "-ERR unknown command 'FOO'\r\n" + ":0\r\n" + ":-9223372036854775808\r\n" + ":9223372036854775807\r\n"
            + "$5\r\nhello\r\n" + "$0\r\n\r\n" + "$-1\r\n" + "*-1\r\n" + "*0\r\n"
            + "*3\r\n:1\r\n*2\r\n$3\r\nfoo\r\n*1\r\n$-1\r\n-WRONGTYPE nope\r\n"
            + "$6\r\na\r\nb\0c\r\n" + "+\r\n").utf8)

    /// What ``stream`` holds.
    static let expected: [RESPValue] = [
        .simpleString("OK"), .error("ERR unknown command 'FOO'"), .integer(0), .integer(Int.min), .integer(Int.max),
        .bulk(Array("hello".utf8)), .bulk([]), .bulk(nil), .array(nil), .array([]),
        .array([.integer(1), .array([.bulk(Array("foo".utf8)), .array([.bulk(nil)])]), .error("WRONGTYPE nope")]),
        .bulk(Array("a\r\nb\0c".utf8)), .simpleString(""),
    ]

    @Test func parsesEveryTypeInOneFeed() throws {
        var parser = RESPParser()
        #expect(try parser.feed(Self.stream) == Self.expected)
        #expect(parser.isIdle)
    }

    @Test func anySplitIntoTwoGivesTheSameReplies() throws {
        for split in 0...Self.stream.count {
            var parser = RESPParser()
            var replies = try parser.feed(Array(Self.stream[..<split]))
            replies += try parser.feed(Array(Self.stream[split...]))
            #expect(replies == Self.expected, "split at byte \(split)")
        }
    }

    @Test func oneByteAtATimeCompletesEachReplyAtItsLastByte() throws {
        var parser = RESPParser()
        var replies: [RESPValue] = []
        var boundaries: [Int] = []
        for (offset, byte) in Self.stream.enumerated() {
            let completed = try parser.feed([byte])
            if !completed.isEmpty { boundaries.append(offset + 1) }
            replies += completed
            #expect(parser.isIdle == !completed.isEmpty, "at byte \(offset)")
        }
        #expect(replies == Self.expected)
        // Each reply appears exactly when its bytes end: re-parsing each prefix gives the replies so far.
        for (count, boundary) in boundaries.enumerated() {
            var fresh = RESPParser()
            #expect(try fresh.feed(Array(Self.stream[..<boundary])) == Array(Self.expected[...count]))
        }
    }

    @Test func aPartialReplyYieldsNothingUntilItsEnd() throws {
        var parser = RESPParser()
        #expect(try parser.feed(Array("*2\r\n$3\r\nfoo\r\n".utf8)).isEmpty)
        #expect(!parser.isIdle)
        #expect(try parser.feed(Array(":7\r".utf8)).isEmpty)
        #expect(try parser.feed(Array("\n".utf8)) == [.array([.bulk(Array("foo".utf8)), .integer(7)])])
    }

    @Test(arguments: [
        ("!oops\r\n", "unexpected type byte 0x21"),
        ("_\r\n", "not a RESP2 reply"),
        (":12a\r\n", "integer"),
        (":9223372036854775808\r\n", "integer"),
        (":\r\n", "integer"),
        ("$-2\r\n", "length"),
        ("$abc\r\n", "length"),
        ("*-5\r\n", "length"),
        ("$1\r\nab\r\n", "longer than its declared length"),
        ("+OK\n", "LF without CR"),
        ("+OK\rX", "CR not followed by LF"),
    ])
    func badInputIsAProtocolErrorAndFinal(input: String, fragment: String) throws {
        var parser = RESPParser()
        let error = #expect(throws: RedisError.self) { try parser.feed(Array(input.utf8)) }
        guard case .protocolError(let message)? = error else {
            Issue.record("expected a protocol error, got \(String(describing: error))")
            return
        }
        #expect(message.contains(fragment), "\(message)")
        // The stream lost its framing: even a valid reply is refused afterwards.
        #expect(throws: RedisError.protocolError(message)) { try parser.feed(Array("+OK\r\n".utf8)) }
        #expect(throws: RedisError.protocolError(message)) { try parser.feed([]) }
    }

    @Test func declaredSizesAndDepthAreBounded() throws {
        let limits = RESPParserLimits(maximumLineLength: 8, maximumBulkLength: 10, maximumArrayLength: 3, maximumDepth: 2)
        let cases = [
            ("$11\r\n", "over the limit of 10"),
            ("*4\r\n", "over the limit of 3"),
            ("*1\r\n*1\r\n*1\r\n", "deeper than 2"),
            ("+123456789\r\n", "longer than 8 bytes"),
        ]
        for (input, fragment) in cases {
            var parser = RESPParser(limits: limits)
            #expect(throws: RedisError.self) { try parser.feed(Array(input.utf8)) }
            guard case .failed(let message) = parser.state else {
                Issue.record("parser did not fail on \(input.debugDescription)")
                continue
            }
            #expect(message.contains(fragment), "\(message)")
        }
        var withinLimits = RESPParser(limits: limits)
        #expect(
            try withinLimits.feed(Array("$10\r\n0123456789\r\n*3\r\n*1\r\n:1\r\n:2\r\n:3\r\n".utf8))
                == [.bulk(Array("0123456789".utf8)), .array([.array([.integer(1)]), .integer(2), .integer(3)])])
    }

    @Test func aLargeBulkStringArrivesIntactInSmallPieces() throws {
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let input = Array("$\(payload.count)\r\n".utf8) + payload + Array("\r\n".utf8)
        var parser = RESPParser()
        var replies: [RESPValue] = []
        for start in stride(from: 0, to: input.count, by: 4093) {
            replies += try parser.feed(Array(input[start..<min(start + 4093, input.count)]))
        }
        #expect(replies == [.bulk(payload)])
    }
}
