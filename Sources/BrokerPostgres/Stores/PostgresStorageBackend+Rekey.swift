import BrokerCore

extension PostgresStorageBackend {
    /// The table, key column and path prefix each kind of sealed record lives in.
    static func rekeyTable(_ kind: SealedRecordRekey.Kind) -> (table: String, key: String, path: String) {
        switch kind {
        case .pendingFlows: return ("flows", "state", "postgres flows/")
        case .appTokens: return ("app_tokens", "key", "postgres app_tokens/")
        case .clientRegistrations: return ("client_registrations", "key", "postgres client_registrations/")
        }
    }

    /// Reseals with `codec`'s current key the pending flows, app tokens and client registrations holding a secret
    /// in plaintext or sealed with another key (``SealedRecordRekey``); with `dryRun` only counts them (writing nothing); `skipping` names kinds whose table the schema lacks. Returns, per
    /// kind, how many were (or would be) rewritten and how many rows exist.
    ///
    /// Every row of a kind is read and its stale records opened before any of
    /// them is written, so a record that does not open stops the run first.
    /// Each `UPDATE` matches only the bytes that were read: a row a running
    /// replica changed or removed meanwhile (a flow taken by its callback) is
    /// read again and resealed if it is still there and still stale.
    public func rekeySealedRecords(
        codec: EncryptedAccountCodec, dryRun: Bool = false, skipping: Set<SealedRecordRekey.Kind> = []
    ) async throws(StoreError)
        -> [(kind: SealedRecordRekey.Kind, rewritten: Int, total: Int)]
    {
        var results: [(kind: SealedRecordRekey.Kind, rewritten: Int, total: Int)] = []
        for kind in SealedRecordRekey.Kind.allCases where !skipping.contains(kind) {
            let (table, column, path) = Self.rekeyTable(kind)
            var stale: [(key: String, bytes: [UInt8], resealed: [UInt8])] = []
            var total = 0
            var after = ""
            while true {
                let rows = try await client.storeQuery(
                    "SELECT \(column), record FROM \(table) WHERE \(column) > $1 ORDER BY \(column) LIMIT $2",
                    [.text(after), .int(PostgresAccountRepository.rekeyBatch)])
                for row in rows.rows {
                    guard let key = row.string(0) else { continue }
                    after = key
                    total += 1
                    guard let bytes = row.bytea(1) else { throw .corrupt(path: path + key, reason: "the record is not bytea") }
                    if let resealed = try SealedRecordRekey.resealed(bytes, kind: kind, key: key, path: path + key, codec: codec) {
                        stale.append((key, bytes, resealed))
                    }
                }
                if rows.rows.count < PostgresAccountRepository.rekeyBatch { break }
            }
            var rewritten = dryRun ? stale.count : 0
            if !dryRun {
                for (key, bytes, resealed) in stale where try await reseal(kind, key: key, bytes: bytes, resealed: resealed, codec: codec) {
                    rewritten += 1
                }
            }
            results.append((kind, rewritten, total))
        }
        return results
    }

    /// Replaces the row of `key` holding `bytes` by `resealed`; when a writer changed it meanwhile, reads it again and
    /// reseals what is there. Returns whether it rewrote the row (false when it is gone or no longer stale).
    private func reseal(
        _ kind: SealedRecordRekey.Kind, key: String, bytes: [UInt8], resealed: [UInt8], codec: EncryptedAccountCodec
    ) async throws(StoreError) -> Bool {
        let (table, column, path) = Self.rekeyTable(kind)
        var expected = bytes
        var replacement = resealed
        for _ in 0..<20 {
            let updated = try await client.storeQuery(
                "UPDATE \(table) SET record = $2::bytea WHERE \(column) = $1 AND record = $3::bytea",
                [.text(key), .bytea(replacement), .bytea(expected)])
            if updated.affectedRows == 1 { return true }
            let rows = try await client.storeQuery("SELECT record FROM \(table) WHERE \(column) = $1", [.text(key)])
            guard let row = rows.rows.first else { return false }
            guard let now = row.bytea(0) else { throw .corrupt(path: path + key, reason: "the record is not bytea") }
            guard let again = try SealedRecordRekey.resealed(now, kind: kind, key: key, path: path + key, codec: codec) else {
                return false
            }
            (expected, replacement) = (now, again)
        }
        throw .unavailable("rekey of \(kind.rawValue) \(key): 20 attempts in a row lost to concurrent writers")
    }
}
