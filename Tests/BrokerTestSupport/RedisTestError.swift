/// A failure of the test harness itself, such as a missing `redis-server`.
public struct RedisTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
