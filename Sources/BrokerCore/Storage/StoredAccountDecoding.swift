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

    /// ``readableAccount(reading:reusing:)`` for one thread's many records, when the codec has that fast path: a reader
    /// that holds its own copy of what each record is checked against, called without this protocol in between.
    func sealedRecordReader() -> SealedRecordReader?
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

    /// None: ``readableAccount(reading:reusing:)`` is the only way.
    package func sealedRecordReader() -> SealedRecordReader? { nil }
}

/// ``EncryptedAccountCodec``'s ``StoredAccountDecoding/readableAccount(reading:reusing:)`` for one decoding thread.
///
/// Start-up's decoding threads each read half a million records. Through the codec, every record paid for the call
/// through the protocol (the large result copied once more on the way back) and for counting references on the
/// keyring's arrays, which both threads did on the same objects at once, so the counts' cache lines went back and
/// forth between the cores (`swift_retain` and `swift_release` 10 % of a start's samples). A reader holds its own
/// copy of the keyring's key ids, made for the thread that uses it, and is called directly.
package struct SealedRecordReader {
    /// The ids of the keyring's keys, in the keyring's order, each a string of this reader's own.
    private let keyIDs: [String]

    /// A reader checking records against `keyring`.
    init(keyring: EncryptionKeyring) {
        keyIDs = keyring.keys.map { String(decoding: Array($0.id.utf8), as: UTF8.self) }
    }

    /// The same as ``EncryptedAccountCodec``'s ``StoredAccountDecoding/readableAccount(reading:reusing:)``.
    package func readableAccount(
        reading bytes: UnsafeRawBufferPointer, reusing shared: CompactAccount.Shared?
    ) -> (readable: CompactAccount, keyIDs: SealedKeyIDs)? {
        AccountRecordScanner.sealedKeyIDs(bytes.assumingMemoryBound(to: UInt8.self), keyIDs: keyIDs, reusing: shared)
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
