import BrokerCore

extension PostgresAccountRepository {
    /// Reseals with `codec`'s current key every record that is plaintext or sealed with another key; returns (rewritten, total).
    ///
    /// `codec` must be the codec the repository was created with. Every row is
    /// read first, in pages by id, and every stale record opened (one that does
    /// not open stops the run before anything is written). Then the stale rows
    /// are rewritten in pipelines of ``rekeyBatch``, each `UPDATE` matching only
    /// the bytes that were read, so a write by a running replica in between is
    /// never overwritten: that row is read, checked and rewritten again. The
    /// decoded account is unchanged, so no cache needs telling.
    public func rekey(codec: EncryptedAccountCodec) async throws(StoreError) -> (rewritten: Int, total: Int) {
        let (candidates, total) = try await rekeyPlan(codec: codec)
        var rewritten = 0
        var start = 0
        let stale = candidates.map { (id: $0.id, bytes: $0.bytes) }
        while start < stale.count {
            let batch = Array(stale[start..<min(start + Self.rekeyBatch, stale.count)])
            start += batch.count
            var updates: [PostgresQuery] = []
            for (id, bytes) in batch {
                updates.append(try Self.reseal(id: id, bytes: bytes, codec: codec))
            }
            let results: [PostgresRows]
            do {
                results = try await client.pipeline(updates)
            } catch {
                throw error.storeError
            }
            for (index, result) in results.enumerated() {
                if result.affectedRows == 1 {
                    rewritten += 1
                } else if try await resealAgain(id: batch[index].id, codec: codec) {
                    rewritten += 1
                }
            }
        }
        return (rewritten, total)
    }

    /// A row ``rekey(codec:)`` would reseal: its id, its bytes as read, and the ids of the other keys it is sealed
    /// with (sorted; empty for a plaintext record).
    public struct RekeyCandidate: Sendable {
        public var id: String
        public var bytes: [UInt8]
        public var sealedWith: [String]
    }

    /// What ``rekey(codec:)`` would reseal, found without writing: every row is read in pages by id and every stale
    /// record opened, so a record the rekey would stop at throws here the same way. Returns the candidates by id and
    /// how many rows exist.
    public func rekeyPlan(codec: EncryptedAccountCodec) async throws(StoreError) -> (candidates: [RekeyCandidate], total: Int) {
        var stale: [RekeyCandidate] = []
        var total = 0
        var after = ""
        while true {
            let rows = try await client.storeQuery(
                "SELECT id, record FROM accounts WHERE id > $1 ORDER BY id LIMIT $2", [.text(after), .int(Self.rekeyBatch)])
            for row in rows.rows {
                guard let id = row.string(0) else { continue }
                after = id
                total += 1
                guard let bytes = row.bytea(1) else { throw .corrupt(path: Self.path(id), reason: "the record is not bytea") }
                guard try codec.needsRekey(bytes, path: Self.path(id)) else { continue }
                let stored = try codec.storedAccount(bytes, path: Self.path(id))
                _ = try stored.opened(path: Self.path(id))
                let keys = Set((stored.sealed?.all ?? []).map(\.key.id).filter { $0 != codec.keyring.current.id })
                stale.append(RekeyCandidate(id: id, bytes: bytes, sealedWith: keys.sorted()))
            }
            if rows.rows.count < Self.rekeyBatch { break }
        }
        return (stale, total)
    }

    /// How many rows a page of the scan and a pipeline of rewrites hold.
    static let rekeyBatch = 500

    /// The `UPDATE` that replaces `bytes` (as read) by the same account sealed with the current key.
    private static func reseal(id: String, bytes: [UInt8], codec: EncryptedAccountCodec) throws(StoreError) -> PostgresQuery {
        let resealed = try codec.encode(try codec.decode(bytes, path: path(id)))
        return PostgresQuery(
            "UPDATE accounts SET record = $2::bytea WHERE id = $1 AND record = $3::bytea", [.text(id), .bytea(resealed), .bytea(bytes)])
    }

    /// Reads the row of `id` again after a writer changed it meanwhile, and reseals it if it still needs it; returns
    /// whether it rewrote it (false when it is gone or already sealed with the current key).
    private func resealAgain(id: String, codec: EncryptedAccountCodec) async throws(StoreError) -> Bool {
        for _ in 0..<20 {
            let rows = try await client.storeQuery("SELECT record FROM accounts WHERE id = $1", [.text(id)])
            guard let row = rows.rows.first else { return false }
            guard let bytes = row.bytea(0) else { throw .corrupt(path: Self.path(id), reason: "the record is not bytea") }
            guard try codec.needsRekey(bytes, path: Self.path(id)) else { return false }
            let update = try Self.reseal(id: id, bytes: bytes, codec: codec)
            if try await client.storeQuery(update.sql, update.parameters).affectedRows == 1 { return true }
        }
        throw .unavailable("rekey of account \(id): 20 attempts in a row lost to concurrent writers")
    }
}
