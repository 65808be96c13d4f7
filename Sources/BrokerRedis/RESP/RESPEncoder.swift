/// Writes commands the way Redis reads them: each an array of bulk strings, binary safe.
enum RESPEncoder {
    /// The bytes of `commands`, one after another, ready to be written in one go (pipelining).
    static func encode(_ commands: [RedisCommand]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(commands.reduce(0) { $0 + 16 + $1.arguments.reduce(0) { $0 + $1.count + 16 } })
        for command in commands { append(command, to: &out) }
        return out
    }

    /// Appends `*<n>\r\n` and `$<len>\r\n<bytes>\r\n` per argument: the RESP request form.
    ///
    /// Length-prefixed bulk strings make any byte legal in an argument, CR LF and NUL included.
    static func append(_ command: RedisCommand, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "*"))
        out.append(contentsOf: String(command.arguments.count).utf8)
        out.append(contentsOf: crlf)
        for argument in command.arguments {
            out.append(UInt8(ascii: "$"))
            out.append(contentsOf: String(argument.count).utf8)
            out.append(contentsOf: crlf)
            out.append(contentsOf: argument)
            out.append(contentsOf: crlf)
        }
    }

    private static let crlf: [UInt8] = [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
}
