/// Why a `redis://`, `rediss://` or `redis-sentinel://` URL was refused; the reason names the part at fault and never repeats the password.
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for example `port "63x9" is not a number from 1 to 65535`.
    public let reason: String

    /// Creates the error with `reason`.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The reason, prefixed so that it reads alone in a start-up failure.
    public var description: String {
        "invalid redis URL: \(reason) (expected redis[s]://[user:password@]host:port[/db] or redis-sentinel://[user:password@]host:26379[,host:26379…]/name[/db])"
    }
}
