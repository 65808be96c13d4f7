extension BrokerError {
    /// The broker error for a repository, flow-store, lock or backoff-store failure: ``storageUnavailable(_:)``, or
    /// ``recordDamaged(_:)`` for a record that does not read (which no retry mends).
    ///
    /// The detail is for logs (a path and an operation, never a secret); the API
    /// message stays generic. This is the one place a ``StoreError`` becomes a
    /// ``BrokerError``: Swift converts between typed errors only where a `catch`
    /// says so, so each service call into a store ends in `catch { throw BrokerError(error) }`.
    public init(_ error: StoreError) {
        switch error {
        case .unavailable(let message): self = .storageUnavailable(message)
        case .corrupt: self = .recordDamaged(error.description)
        }
    }
}
