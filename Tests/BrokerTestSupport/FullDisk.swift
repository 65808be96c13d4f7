import BrokerFileStore
import Foundation
import Glibc

/// A full disk under the account journal, without mounts, for a repository open on a data directory.
///
/// Tests run as root, so permission bits stop no write. The store opens the
/// newest journal by name for each append, so the name is pointed at
/// `/dev/full` (a symbolic link in place of the journal, which is kept aside):
/// every append then fails with `ENOSPC`, the error a full disk gives, while
/// reads go on from the descriptor the store holds on the real file.
/// `scripts/disk-full` does the same on a real full tmpfs.
public enum FullDisk {
    /// Makes every append to the newest account journal under `directory` fail with `ENOSPC`; returns what undoes it.
    public static func fillAccountJournal(in directory: String) throws -> () throws -> Void {
        let journals = AccountStoreFiles.fileNames(in: directory).filter { $0.hasPrefix("accounts.journal.") }
        guard let newest = journals.max(by: { generation($0) < generation($1) }) else {
            throw FullDiskError("no account journal under \(directory)")
        }
        let path = directory + "/" + newest
        let aside = path + ".full-disk-aside"
        guard rename(path, aside) == 0 else { throw FullDiskError("cannot move \(path) aside: errno \(errno)") }
        guard symlink("/dev/full", path) == 0 else {
            rename(aside, path)
            throw FullDiskError("cannot link \(path) to /dev/full: errno \(errno)")
        }
        return {
            guard unlink(path) == 0, rename(aside, path) == 0 else { throw FullDiskError("cannot put \(path) back: errno \(errno)") }
        }
    }

    /// The generation in a journal's file name (`accounts.journal.<G>.jsonl`).
    private static func generation(_ name: String) -> Int {
        Int(name.dropFirst("accounts.journal.".count).dropLast(".jsonl".count)) ?? 0
    }
}

/// Why ``FullDisk`` could not fill or empty a journal.
public struct FullDiskError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
