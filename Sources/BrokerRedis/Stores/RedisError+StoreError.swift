import BrokerCore

extension RedisError {
    /// The store error a repository reports for this failure: always ``StoreError/unavailable(_:)``.
    ///
    /// Whatever went wrong with Redis, the app's answer is the same: 503
    /// `storage_unavailable`, and nothing was half-written (writes are `MULTI`/`EXEC`).
    var storeError: StoreError {
        .unavailable(description)
    }
}
