extension BrokerError {
    /// Maps a repository or flow-store failure to ``BrokerError/storageUnavailable(_:)``; a ``BrokerError`` passes through.
    ///
    /// The detail is for logs (a path and an operation, never a secret); the API message stays generic.
    static func storage(_ error: any Error) -> BrokerError {
        switch error {
        case let error as BrokerError: error
        case StoreError.unavailable(let message): .storageUnavailable(message)
        case let error as StoreError: .storageUnavailable(error.description)
        default: .storageUnavailable("store operation failed: \(type(of: error))")
        }
    }

    /// Runs a store operation, mapping whatever it throws with ``storage(_:)``: the one place a
    /// repository, flow store or lock failure becomes a broker error.
    static func fromStore<T>(_ operation: () async throws -> T) async throws(BrokerError) -> T {
        do {
            return try await operation()
        } catch {
            throw storage(error)
        }
    }
}
