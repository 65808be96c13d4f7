/// A codec that can hand the file store an account whose secrets stay sealed until it is first used.
///
/// Start-up with many records then pays for parsing and checks only; the
/// ChaCha20-Poly1305 openings happen on first read (or in the background).
package protocol StoredAccountDecoding: AccountRecordCodec {
    /// The account in `bytes`, checked in full except for the decryption of its secrets.
    ///
    /// `path` is built only for an error message. Throws
    /// ``StoreError/corrupt(path:reason:)`` naming it for every record
    /// ``AccountRecordCodec/decode(_:path:)`` would reject without decrypting.
    func storedAccount(_ bytes: [UInt8], path: @autoclosure () -> String) throws(StoreError) -> StoredAccount

    /// ``storedAccount(_:path:)`` for a record read in place (a line of a mapped file), without copying it when it can.
    func storedAccount(reading bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(StoreError) -> StoredAccount

    /// The readable part of the sealed account in `bytes` (its secrets empty placeholders), compacted as the file
    /// store's index holds it (sharing `reusing`'s out-of-line fields when they are the same), and the ids of the keys
    /// its secrets are sealed with, when the record passes every check ``storedAccount(reading:path:)`` makes
    /// without decoding its envelopes: the caller keeps the record where it lies and decodes them when it opens the
    /// account. Nil for any other record (one that does not decode, a plaintext one, one this fast path declines);
    /// ``storedAccount(reading:path:)`` then gives the account or the error.
    func readableAccount(
        reading bytes: UnsafeRawBufferPointer, reusing shared: CompactAccount.Shared?
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)?
}

extension StoredAccountDecoding {
    /// Copies the bytes, then ``storedAccount(_:path:)``.
    package func storedAccount(reading bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(StoreError) -> StoredAccount {
        try storedAccount([UInt8](bytes), path: path())
    }

    /// None: every record is decoded with ``storedAccount(reading:path:)``.
    package func readableAccount(
        reading bytes: UnsafeRawBufferPointer, reusing shared: CompactAccount.Shared?
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)? {
        nil
    }
}

/// A codec's ability to decode records with their secrets still sealed (``StoredAccountDecoding``), as its codec offers it.
public struct DeferredAccountDecoding: Sendable {
    /// The codec, as a deferring decoder.
    package let decoder: any StoredAccountDecoding

    /// Offers `decoder`'s deferred decoding.
    package init(_ decoder: any StoredAccountDecoding) {
        self.decoder = decoder
    }
}
