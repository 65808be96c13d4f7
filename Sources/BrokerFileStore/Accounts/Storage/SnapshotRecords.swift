import BrokerCore

/// The records of the snapshot start-up read, where the sealed secrets it left undecoded still lie.
///
/// At start-up only the readable part of a sealed snapshot record is
/// decoded: its envelopes are checked (key id, Base64, lengths) and left in
/// the file, not decoded into memory. Opening such an account reads its record
/// again from here and decodes it in full, so the ChaCha20-Poly1305 check runs
/// on what the file holds then. The arrays are the ones ``RecordLocations``
/// was built with (shared, not copied), and the file stays open while this is
/// held, even once a compaction has replaced it.
final class SnapshotRecords: Sendable {
    /// The snapshot.
    let file: AccountStoreFile
    /// Its records' ids, ascending, with their offsets and lengths.
    private let keys: [ExactKey]
    private let offsets: [Int]
    private let lengths: [UInt32]

    /// The records of `file` at `offsets` (lengths `lengths`), of the ids `keys` in ascending order.
    init(file: AccountStoreFile, keys: [ExactKey], offsets: [Int], lengths: [UInt32]) {
        self.file = file
        self.keys = keys
        self.offsets = offsets
        self.lengths = lengths
    }

    /// The sealed secrets of account `id` as its snapshot record holds them now, decoded with `decoder`.
    ///
    /// Throws ``StoreError/corrupt(path:reason:)`` naming `path` when the record no longer decodes, is not
    /// sealed or is not the account's: the file changed after start-up, and nothing it holds is served.
    func sealedSecrets(of id: String, decoder: any StoredAccountDecoding, path: @autoclosure () -> String) throws(StoreError)
        -> SealedSecrets
    {
        let key = ExactKey(id)
        guard let position = KeyOrder.position(of: key, in: keys, count: keys.count) else {
            throw .corrupt(path: path(), reason: "the snapshot no longer holds the account's record")
        }
        let bytes = try file.read(offset: offsets[position], length: Int(lengths[position]))
        let stored = try decoder.storedAccount(bytes, path: path())
        guard let sealed = stored.sealed, stored.account.id.utf8.elementsEqual(id.utf8) else {
            throw .corrupt(path: path(), reason: "the record changed on disk: it no longer holds the account's sealed secrets")
        }
        return sealed
    }
}
