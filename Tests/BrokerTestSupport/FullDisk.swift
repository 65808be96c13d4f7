import BrokerFileStore
import Foundation
import Glibc

/// A full disk under the account journal, without mounts, for the repository this process has open on a data directory.
///
/// The store appends to a journal it keeps open, so neither permission bits
/// (tests run as root) nor swapping the directory away stop its writes. Instead
/// the descriptor this process holds on the newest journal is pointed at
/// `/dev/full` (`dup2(2)`), whose every write fails with `ENOSPC`, the error a
/// full disk gives. Nothing else in the process is touched; `scripts/disk-full`
/// does the same on a real full tmpfs.
public enum FullDisk {
    /// Makes every append to the newest account journal under `directory` fail with `ENOSPC`; returns what undoes it.
    ///
    /// Throws when no journal is open in this process (no repository open on `directory`).
    public static func fillAccountJournal(in directory: String) throws -> () throws -> Void {
        let journals = AccountStoreFiles.fileNames(in: directory).filter { $0.hasPrefix("accounts.journal.") }
        let newest = journals.max { generation($0) < generation($1) }
        guard let newest, let path = realpath(directory + "/" + newest) else {
            throw FullDiskError("no account journal under \(directory)")
        }
        let descriptors = openDescriptors(on: path)
        guard !descriptors.isEmpty else { throw FullDiskError("no descriptor of this process is open on \(path)") }
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        guard full >= 0 else { throw FullDiskError("cannot open /dev/full: errno \(errno)") }
        defer { close(full) }
        for descriptor in descriptors where dup2(full, descriptor) < 0 {
            throw FullDiskError("dup2 onto descriptor \(descriptor): errno \(errno)")
        }
        return {
            let journal = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
            guard journal >= 0 else { throw FullDiskError("cannot reopen \(path): errno \(errno)") }
            defer { close(journal) }
            for descriptor in descriptors where dup2(journal, descriptor) < 0 {
                throw FullDiskError("dup2 onto descriptor \(descriptor): errno \(errno)")
            }
        }
    }

    /// The generation in a journal's file name (`accounts.journal.<G>.jsonl`).
    private static func generation(_ name: String) -> Int {
        Int(name.dropFirst("accounts.journal.".count).dropLast(".jsonl".count)) ?? 0
    }

    /// The canonical path of `path`, or nil when it does not exist.
    private static func realpath(_ path: String) -> String? {
        guard let resolved = Glibc.realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The descriptors of this process open on the file at the canonical `path` (read from `/proc/self/fd`).
    private static func openDescriptors(on path: String) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { name -> Int32? in
            guard let descriptor = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name), target == path
            else { return nil }
            return descriptor
        }
    }
}

/// Why ``FullDisk`` could not fill or empty a journal.
public struct FullDiskError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
