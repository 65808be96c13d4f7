/// Why a Redis call failed; messages name the server and the problem, never a password or a stored value.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection could be had: refused, reset, closed, or refused at `AUTH`/`SELECT`; the pool retries with backoff.
    case unavailable(String)
    /// The server did not answer within the client's timeout; the connection was closed.
    case timeout
    /// The server answered with an error reply; this is its text, such as `ERR unknown command 'FOO'`.
    case server(String)
    /// The server sent bytes that are not RESP2, or more replies than commands; the connection was closed.
    case protocolError(String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .unavailable(let message):
            return "redis unavailable: \(message)"
        case .timeout:
            return "redis did not answer in time"
        case .server(let message):
            return "redis error: \(message)"
        case .protocolError(let message):
            return "redis protocol error: \(message)"
        }
    }
}
