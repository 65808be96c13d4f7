import Testing

@testable import BrokerRedis

/// The command encoder: arrays of bulk strings, lengths in bytes, any byte allowed.
struct RESPEncoderTests {
    @Test func encodesACommandAsAnArrayOfBulkStrings() {
        let bytes = RESPEncoder.encode([RedisCommand("SET", "key", "value")])
        #expect(String(decoding: bytes, as: UTF8.self) == "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
    }

    @Test func lengthsCountUTF8BytesNotCharacters() {
        let bytes = RESPEncoder.encode([RedisCommand("ECHO", "ü€")])
        #expect(String(decoding: bytes, as: UTF8.self) == "*2\r\n$4\r\nECHO\r\n$5\r\nü€\r\n")
    }

    @Test func pipelinedCommandsFollowOneAnother() {
        let bytes = RESPEncoder.encode([RedisCommand("PING"), RedisCommand("GET", ""), RedisCommand("PING")])
        #expect(String(decoding: bytes, as: UTF8.self) == "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n")
    }

    @Test func everyByteValueSurvivesEncodingAndParsingBack() throws {
        let binary = (0...255).map(UInt8.init) + Array("\r\n$3\r\n*1\r\n".utf8) + [0, 0, 13]
        let command = RedisCommand(bytes: [Array("SET".utf8), binary, [], [13, 10]])
        var parser = RESPParser()
        // A request is itself valid RESP: an array of bulk strings.
        let parsed = try parser.feed(RESPEncoder.encode([command, command]))
        let expected = RESPValue.array(command.arguments.map { .bulk($0) })
        #expect(parsed == [expected, expected])
    }
}
