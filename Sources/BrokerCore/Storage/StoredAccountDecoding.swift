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
}

extension StoredAccountDecoding {
    /// Copies the bytes, then ``storedAccount(_:path:)``.
    package func storedAccount(reading bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(StoreError) -> StoredAccount {
        try storedAccount([UInt8](bytes), path: path())
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
