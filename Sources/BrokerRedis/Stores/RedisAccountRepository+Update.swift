import BrokerCore

extension RedisAccountRepository {
    /// Removes the account with `id` and its index entries in one transaction; returns it, or nil when there was none.
    public func delete(id: String) async throws(StoreError) -> Account? {
        try await apply(id: id) { _ in nil }.previous
    }

    /// Reads the account under `WATCH`, applies `transform`, and commits the result with `MULTI`/`EXEC`.
    ///
    /// When another writer changed the key in between, `EXEC` does nothing and
    /// the read and transform are repeated, so no concurrent update is lost.
    /// An unchanged result writes nothing; nil deletes. A result with another id
    /// is refused. An error thrown by `transform` propagates and changes nothing.
    /// `transform` runs while a pooled connection is held, so it must not call
    /// this repository itself.
    public func update(id: String, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account? {
        try await apply(id: id, transform).stored
    }

    /// The `WATCH`/`MULTI`/`EXEC` loop behind ``update(id:_:)`` and ``delete(id:)``: the account before and as stored after.
    private func apply(
        id: String, _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> (previous: Account?, stored: Account?) {
        let key = accountKey(id)
        for _ in 0..<Self.maximumAttempts {
            let outcome = try await client.withConnection {
                (connection) async throws(StoreError) -> (previous: Account?, stored: Account?)? in
                do throws(StoreError) {
                    let current = try decode(try await watch(key, on: connection), key: key)
                    let next = try transform(current)
                    if let next, !ExactKey.same(next.id, id) {
                        throw .unavailable("update of account \(id): the transform returned account \(next.id)")
                    }
                    return try await commit(from: current, to: next, on: connection).map { (current, $0) }
                } catch {
                    // The connection goes back to the pool: it must not carry this WATCH into another task's transaction.
                    _ = try? await connection.send([RedisCommand("UNWATCH")])
                    throw error
                }
            }
            if let result = outcome { return result }
        }
        throw .unavailable("update of account \(id): \(Self.maximumAttempts) attempts in a row lost to concurrent writers")
    }

    /// Sends `WATCH key` and `GET key` and returns the `GET` reply.
    private func watch(_ key: String, on connection: RedisConnection) async throws(StoreError) -> RESPValue {
        let replies = try await run { () async throws(RedisError) in
            try await connection.send([RedisCommand("WATCH", key), RedisCommand("GET", key)])
        }
        if let message = replies.lazy.compactMap(\.errorMessage).first {
            throw RedisError.server(message).storeError
        }
        return replies[1]
    }

    /// Writes `next` in place of `current` under the `WATCH` already set.
    ///
    /// Returns `.some(stored)` once done (`stored` as it reads back, nil when deleted) or `nil` on a conflict.
    private func commit(from current: Account?, to next: Account?, on connection: RedisConnection) async throws(StoreError) -> Account?? {
        let commands: [RedisCommand]
        let stored: Account?
        switch (current, next) {
        case (nil, nil):
            _ = try await run { () async throws(RedisError) in try await connection.send([RedisCommand("UNWATCH")]) }
            return .some(nil)
        case (let current?, nil):
            commands = deleteCommands(current)
            stored = nil
        case (let current, let next?):
            if next == current {
                _ = try await run { () async throws(RedisError) in try await connection.send([RedisCommand("UNWATCH")]) }
                return .some(current)
            }
            let bytes = try codec.encode(next)
            // Return the decoded bytes, so what this returns equals what a later read gives.
            stored = try codec.decode(bytes, path: "redis key \(accountKey(next.id))")
            commands = writeCommands(next, bytes: bytes, replacing: current)
        }
        let outcome = try await run { () async throws(RedisError) in try await RedisTransaction.execute(commands, on: connection) }
        switch outcome {
        case .committed: return .some(stored)
        case .conflict: return nil
        }
    }
}
