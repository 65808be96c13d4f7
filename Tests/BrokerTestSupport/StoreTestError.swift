/// A failure of the test harness itself.
public struct StoreTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
