import BrokerCore

extension RedisAccountRepository {
    /// Reseals with `codec`'s current key every record that is plaintext or sealed with another key; returns (rewritten, total).
    ///
    /// `codec` must be the codec the repository was created with. Every record
    /// is read first (one that does not open stops the run before anything is
    /// written); then each stale record is rewritten under `WATCH`, so a write
    /// by a running replica in between is never overwritten: the record is
    /// read again and checked again. Records already sealed with the current
    /// key are left alone.
    public func rekey(codec: EncryptedAccountCodec, concurrency: Int = AccountRekey.defaultConcurrency) async throws(StoreError) -> (
        rewritten: Int, total: Int
    ) {
        let accounts = try await list(provider: nil)
        let rewritten = try await AccountRekey.count(accounts, concurrency: concurrency) { (account) async throws(StoreError) in
            try await self.reseal(id: account.id, codec: codec)
        }
        return (rewritten, accounts.count)
    }

    /// Rewrites the record of `id` sealed with the current key if it is not already; returns whether it did.
    private func reseal(id: String, codec: EncryptedAccountCodec) async throws(StoreError) -> Bool {
        let key = accountKey(id)
        for _ in 0..<Self.maximumAttempts {
            let outcome: Bool? = try await client.withConnection { (connection) async throws(StoreError) in
                do throws(StoreError) {
                    let replies = try await run { () async throws(RedisError) in
                        try await connection.send([RedisCommand("WATCH", key), RedisCommand("GET", key)])
                    }
                    if let failure = replies.lazy.compactMap(\.errorMessage).first { throw RedisError.server(failure).storeError }
                    guard let bytes = replies[1].bytes, try codec.needsRekey(bytes, path: "redis key \(key)") else {
                        _ = try await run { () async throws(RedisError) in try await connection.send([RedisCommand("UNWATCH")]) }
                        return false
                    }
                    let resealed = try codec.encode(try codec.decode(bytes, path: "redis key \(key)"))
                    let set = RedisCommand(bytes: [Array("SET".utf8), Array(key.utf8), resealed])
                    switch try await run({ () async throws(RedisError) in try await RedisTransaction.execute([set], on: connection) }) {
                    case .committed: return true
                    case .conflict: return nil
                    }
                } catch {
                    _ = try? await connection.send([RedisCommand("UNWATCH")])
                    throw error
                }
            }
            if let outcome { return outcome }
        }
        throw .unavailable("rekey of account \(id): \(Self.maximumAttempts) attempts in a row lost to concurrent writers")
    }
}
