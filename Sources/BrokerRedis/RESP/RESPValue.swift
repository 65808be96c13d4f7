/// One RESP2 reply: the five types of the Redis serialization protocol, version 2.
///
/// Bulk strings and arrays carry bytes, not text, so binary values (an
/// encrypted record, for one) pass unchanged; their nil forms are `$-1` and `*-1`.
public enum RESPValue: Sendable, Equatable {
    /// `+OK\r\n`: a short status line.
    case simpleString(String)
    /// `-ERR message\r\n`: the server refused a command; the text starts with an error code.
    case error(String)
    /// `:42\r\n`: a signed 64-bit integer.
    case integer(Int)
    /// `$3\r\nfoo\r\n`: binary-safe bytes, or nil for `$-1\r\n` (a missing key).
    case bulk([UInt8]?)
    /// `*2\r\n…`: nested replies, or nil for `*-1\r\n` (an `EXEC` aborted by `WATCH`).
    case array([RESPValue]?)
}
