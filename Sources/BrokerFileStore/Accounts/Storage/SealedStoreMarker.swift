import BrokerCore
import Glibc

/// The file that marks a data directory's account store as sealed: from then on every record in it is encrypted.
///
/// A store written by a broker that seals (``AccountRecordCodec/sealsSecrets``)
/// holds only sealed records, so a plaintext record found in it was not written
/// by the broker: a line injected into a journal, or a record edited into a
/// backup. Start-up refuses such a store, naming the file and line, instead of
/// serving the injected token. The marker is written once every record is sealed:
/// at the first start of a new store, or right after a store of an earlier
/// version (whose plaintext records were read as written) has had them sealed.
package enum SealedStoreMarker {
    /// The marker's file name in the data directory.
    package static let fileName = "accounts.sealed"
    /// What the file holds; only its presence counts.
    static let content = Array("{\"sealed\":\"\(EncryptedAccountCodec.algorithm)\"}\n".utf8)

    /// Why a plaintext record is refused in a sealed store, for the error naming its file and line.
    static let plaintextRefusal =
        "a plaintext record in a sealed store (every record the broker writes here is sealed, so this one was put there "
        + "by something else); move the data directory aside and restore a backup, or remove the line"

    /// Whether `directory` holds the marker.
    package static func isPresent(in directory: String) throws(StoreError) -> Bool {
        var status = stat()
        if stat(directory + "/" + fileName, &status) == 0 { return true }
        guard errno == ENOENT else { throw .posix("stat", directory + "/" + fileName) }
        return false
    }

    /// Writes the marker into `directory`, durably (temporary file, fsync, rename, directory fsync).
    package static func write(in directory: String) throws(StoreError) {
        try DurableFile.write(content, to: directory + "/" + fileName)
    }
}
