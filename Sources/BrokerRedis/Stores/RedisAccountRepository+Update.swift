import BrokerCore

extension RedisAccountRepository {
    /// Removes the account with `id` and its index entries in one transaction; returns it, or nil when there was none.
    public func delete(id typedID: AccountID) async throws(StoreError) -> Account? {
        let id = typedID.string
        return try await apply(id: id, alongside: { _, _ in [] }) { _ in nil }.previous
    }

    /// Reads the account under `WATCH`, applies `transform`, and commits the result with `MULTI`/`EXEC`.
    ///
    /// When another writer changed the key in between, `EXEC` does nothing and
    /// the read and transform are repeated, so no concurrent update is lost.
    /// An unchanged result writes nothing; nil deletes. A result with another id
    /// is refused. An error thrown by `transform` propagates and changes nothing.
    /// `transform` runs while a pooled connection is held, so it must not call
    /// this repository itself.
    public func update(id typedID: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError)
        -> Account?
    {
        let id = typedID.string
        return try await apply(id: id, alongside: { _, _ in [] }, transform).stored
    }

    /// Like ``update(id:_:)``, with the event's outbox entries in the account's `MULTI`/`EXEC`.
    ///
    /// The change and its deliveries become visible, and durable, together or
    /// not at all: a transaction a concurrent writer spoiled writes neither, and
    /// its retry builds the event afresh from what it read. Needs the sink to
    /// write to the outbox this repository was created with; with any
    /// other sink the change is written first and the event after
    /// (``AccountRepository/updateThenRecord(id:reporting:to:_:)``).
    public func update(
        id typedID: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        let id = typedID.string
        guard let outbox, sink.changeOutbox === outbox else {
            return try await updateThenRecord(id: typedID, reporting: event, to: sink, transform)
        }
        let result = try await apply(
            id: id,
            alongside: { (before, after) throws(StoreError) -> [RedisCommand] in
                guard let (type, data) = event(before, after) else { return [] }
                return try outbox.appendCommands(sink.deliveries(type, data))
            }, transform)
        if result.appended { sink.appended() }
        return result.stored
    }

    /// The `WATCH`/`MULTI`/`EXEC` loop behind the updates and ``delete(id:)``: the account before and as stored after,
    /// and whether commands from `alongside` (given the account before and after) were committed with it.
    private func apply(
        id: String, alongside: @Sendable (Account?, Account?) throws(StoreError) -> [RedisCommand],
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> (previous: Account?, stored: Account?, appended: Bool) {
        let key = accountKey(id)
        for _ in 0..<Self.maximumAttempts {
            let outcome = try await client.withConnection {
                (connection) async throws(StoreError) -> (previous: Account?, stored: Account?, appended: Bool)? in
                do throws(StoreError) {
                    let current = try decode(try await watch(key, on: connection), key: key)
                    let next = try transform(current)
                    if let next, !ExactKey.same(next.id, id) {
                        throw .unavailable("update of account \(id): the transform returned account \(next.id)")
                    }
                    return try await commit(from: current, to: next, alongside: alongside, on: connection).map {
                        (current, $0.stored, $0.appended)
                    }
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

    /// Writes `next` in place of `current`, and the commands `alongside` gives for the change, under the `WATCH` already set.
    ///
    /// Returns the account as it reads back (nil when deleted) and whether
    /// commands from `alongside` went with it once done, or `nil` on a
    /// conflict. With nothing to write, `WATCH` is lifted and nothing is sent.
    private func commit(
        from current: Account?, to next: Account?, alongside: @Sendable (Account?, Account?) throws(StoreError) -> [RedisCommand],
        on connection: RedisConnection
    ) async throws(StoreError) -> (stored: Account?, appended: Bool)? {
        var commands: [RedisCommand] = []
        let stored: Account?
        switch (current, next) {
        case (nil, nil):
            stored = nil
        case (let current?, nil):
            commands = deleteCommands(current)
            stored = nil
        case (let current, let next?):
            if next == current {
                stored = current
            } else {
                let bytes = try codec.encode(next)
                // Return the decoded bytes, so what this returns equals what a later read gives.
                stored = try codec.decode(bytes, path: "redis key \(accountKey(next.id))")
                commands = writeCommands(next, bytes: bytes, replacing: current)
            }
        }
        let extra = try alongside(current, stored)
        if commands.isEmpty && extra.isEmpty {
            _ = try await run { () async throws(RedisError) in try await connection.send([RedisCommand("UNWATCH")]) }
            return (stored, false)
        }
        let outcome = try await run { () async throws(RedisError) in try await RedisTransaction.execute(commands + extra, on: connection) }
        switch outcome {
        case .committed: return (stored, !extra.isEmpty)
        case .conflict: return nil
        }
    }
}
