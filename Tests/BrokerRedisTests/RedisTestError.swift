/// A failure of the test harness itself, such as a missing `redis-server`.
struct RedisTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
