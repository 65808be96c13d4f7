/// A failure of the test harness itself.
struct StoreTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
