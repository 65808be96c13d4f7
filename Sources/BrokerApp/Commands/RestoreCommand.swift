import BrokerCore
import BrokerFileStore
import Foundation
import Glibc

/// `token-broker restore FILE [--data-dir DIR] [--force]`: installs a backup (`POST /backup`, `token-broker backup`)
/// as the account snapshot of a stopped broker's data directory.
///
/// Offline: it takes the data directory's lock, so it refuses to run while a broker serves the directory (and no broker
/// starts while it runs). The file is checked first (``AccountSnapshotCheck``); a directory that already holds accounts
/// (a snapshot, journals, or account files of the former layout) is refused unless `--force`, which moves those into
/// `backups/replaced-<UTC time>/` first. The file is then written as `accounts.snapshot.jsonl` (temporary file, fsync,
/// rename, directory fsync), with no journal, so the broker started next serves exactly its accounts.
///
/// The encryption key is not in a backup: the restored broker needs the key of the broker that wrote it
/// (`BROKER_ENCRYPTION_KEY`, or its data directory's `encryption-key` file). When one is at hand here, every sealed
/// secret must open with it.
public struct RestoreCommand: Equatable, Sendable {
    /// The backup file.
    public var file: String
    /// The data directory; nil reads `BROKER_DATA_DIR` (default `./data`).
    public var dataDirectory: String?
    /// Move the accounts the directory holds aside instead of refusing.
    public var force: Bool

    /// Creates a command.
    public init(file: String, dataDirectory: String? = nil, force: Bool = false) {
        self.file = file
        self.dataDirectory = dataDirectory
        self.force = force
    }

    /// Reads the arguments after `restore`: the file, `--data-dir DIR` (or `--data-dir=DIR`) and `--force`.
    static func parse(_ arguments: ArraySlice<String>) -> Result<RestoreCommand, BrokerCommand.UsageError> {
        func refuse(_ text: String) -> Result<RestoreCommand, BrokerCommand.UsageError> {
            .failure(BrokerCommand.UsageError(description: text))
        }
        var command = RestoreCommand(file: "")
        var rest = arguments
        while let argument = rest.popFirst() {
            if argument == "--force" {
                command.force = true
            } else if argument == "--data-dir" || argument.hasPrefix("--data-dir=") {
                let value = argument == "--data-dir" ? rest.popFirst() : String(argument.dropFirst("--data-dir=".count))
                guard let value, !value.isEmpty, !value.hasPrefix("-") else { return refuse("--data-dir needs a directory") }
                command.dataDirectory = value
            } else if argument.hasPrefix("-") {
                return refuse("unknown flag \"\(argument)\"")
            } else if command.file.isEmpty {
                command.file = argument
            } else {
                return refuse("unexpected argument \"\(argument)\"")
            }
        }
        guard !command.file.isEmpty else { return refuse("restore needs the backup file: restore FILE [--data-dir DIR] [--force]") }
        return .success(command)
    }

    /// Restores; reads `BROKER_DATA_DIR` and `BROKER_ENCRYPTION_KEY` from `environment`. `now` names the directory
    /// replaced accounts are moved to. Exit status: 0 restored; 1 refused (the file, the directory's accounts, a
    /// running broker) or failed; 2 a bad setting.
    public func run(environment: [String: String], now: Date = Date()) -> AccountsClient.Outcome {
        var directory = dataDirectory ?? ""
        if dataDirectory == nil {
            do {
                directory = try EnvironmentReader(environment).string("BROKER_DATA_DIR", default: "./data")
            } catch {
                return .failed(2, "invalid configuration", error.description)
            }
        }
        let bytes: [UInt8]
        do {
            guard let read = try DurableFile.read(file) else { return .failed(1, "restore refused", "\(file): no such file") }
            bytes = read
        } catch {
            return .failed(1, "restore refused", "cannot read \(file): \(error.message)")
        }
        let keyring: EncryptionKeyring?
        do {
            keyring = try EncryptionKeyring.loadExisting(
                environmentValue: environment[EncryptionKeyring.environmentVariable], dataDirectory: directory)
        } catch let error as EncryptionKeyError {
            return .failed(
                2, "invalid configuration",
                ConfigurationError(variable: EncryptionKeyring.environmentVariable, message: error.problem).description)
        } catch {
            return .failed(1, "restore failed", "cannot read the encryption key in \(directory): \(error)")
        }
        let summary: AccountSnapshotCheck.Summary
        do {
            summary = try AccountSnapshotCheck.check(bytes, file: file, keyring: keyring)
        } catch {
            return .failed(1, "restore refused", error.description + "; nothing was changed")
        }
        do {
            let moved = try install(bytes, sealed: !summary.keyIDs.isEmpty, in: directory, now: now)
            return .done(report(summary, directory: directory, moved: moved, keyring: keyring, environment: environment))
        } catch let refusal as AccountSnapshotCheck.Refusal {
            return .failed(1, "restore refused", refusal.description)
        } catch {
            return .failed(1, "restore failed", "\(error)")
        }
    }

    /// Takes the directory's lock, moves existing accounts aside (with `--force`) and writes the snapshot; returns
    /// where the replaced accounts went, if any.
    ///
    /// A backup of sealed records leaves the store marked sealed (``SealedStoreMarker``), so a plaintext line added
    /// before the broker starts is refused; one of plaintext records (from before encryption at rest) leaves it
    /// unmarked, and the broker seals them at its start.
    private func install(_ bytes: [UInt8], sealed: Bool, in directory: String, now: Date) throws -> String? {
        try DataDirectory.prepare(directory)
        let lock: DataDirectoryLock?
        do {
            lock = try DataDirectoryLock.acquire(in: directory)
        } catch {
            throw AccountSnapshotCheck.Refusal(description: "\(error); stop the broker first. Nothing was changed")
        }
        guard let lock else {
            throw AccountSnapshotCheck.Refusal(
                description: "cannot take the lock of \(directory) (\(DataDirectoryLock.fileName)): is the file system read-only?")
        }
        defer { lock.release() }
        let existing = try accountFiles(in: directory)
        var moved: String?
        if !existing.isEmpty {
            guard force else {
                throw AccountSnapshotCheck.Refusal(
                    description: "\(directory) already holds accounts (\(existing.joined(separator: ", "))); "
                        + "restore --force moves them to \(directory)/\(BackupHandlers.directoryName)/replaced-…/ first. Nothing was changed"
                )
            }
            moved = try moveAside(existing, in: directory, now: now)
        }
        // An empty directory of the former layout holds nothing, but beside a snapshot it would read as half migrated.
        let former = directory + "/" + AccountStoreFormat.legacyDirectoryName
        if rmdir(former) == 0 { try DurableFile.syncDirectory(directory) }
        try DurableFile.write(bytes, to: directory + "/" + AccountStoreFormat.snapshotName)
        if sealed {
            try SealedStoreMarker.write(in: directory)
        } else if unlink(directory + "/" + SealedStoreMarker.fileName) == 0 {
            try DurableFile.syncDirectory(directory)
        }
        return moved
    }

    /// The names in `directory` that hold accounts: the snapshot, journals, and a non-empty former `accounts/`.
    private func accountFiles(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        return names.filter { name in
            if name == AccountStoreFormat.snapshotName || name == SealedStoreMarker.fileName || Self.isJournal(name) { return true }
            guard name == AccountStoreFormat.legacyDirectoryName else { return false }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + name)) ?? []
            return !entries.isEmpty
        }
    }

    /// Whether `name` is named like a journal of the account store, `accounts.journal.<digits>.jsonl`: any such file is
    /// moved aside, whether or not the store would read it.
    static func isJournal(_ name: String) -> Bool {
        guard name.hasPrefix("accounts.journal."), name.hasSuffix(".jsonl") else { return false }
        let generation = name.dropFirst("accounts.journal.".count).dropLast(".jsonl".count)
        return !generation.isEmpty && generation.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Renames `names` into a new `backups/replaced-<UTC time>/` and makes the renames durable; returns its path.
    private func moveAside(_ names: [String], in directory: String, now: Date) throws -> String {
        let backups = directory + "/" + BackupHandlers.directoryName
        try DataDirectory.prepare(backups)
        let stamp = BackupHandlers.stamp(now)
        var target = ""
        for attempt in 1...1000 {
            let candidate = backups + "/replaced-" + stamp + (attempt == 1 ? "" : "-\(attempt)")
            if mkdir(candidate, 0o700) == 0 {
                target = candidate
                break
            }
            guard errno == EEXIST else { throw StoreError.posix("create directory", candidate) }
        }
        guard !target.isEmpty else { throw StoreError.unavailable("\(backups) already holds 1000 replaced-\(stamp) directories") }
        for name in names {
            guard rename(directory + "/" + name, target + "/" + name) == 0 else {
                throw StoreError.posix("move \(directory)/\(name) to", target)
            }
        }
        try DurableFile.syncDirectory(target)
        try DurableFile.syncDirectory(backups)
        try DurableFile.syncDirectory(directory)
        return target
    }

    /// What was done, and what the broker needs to serve it.
    private func report(
        _ summary: AccountSnapshotCheck.Summary, directory: String, moved: String?, keyring: EncryptionKeyring?,
        environment: [String: String]
    ) -> String {
        let count = "\(summary.accounts) account\(summary.accounts == 1 ? "" : "s")"
        var lines = ["Restored \(count) from \(file) into \(directory)/\(AccountStoreFormat.snapshotName)."]
        if let moved { lines.append("The accounts \(directory) held before are in \(moved)/.") }
        let keySource =
            environment[EncryptionKeyring.environmentVariable] != nil
            ? EncryptionKeyring.environmentVariable : "\(directory)/\(EncryptionKeyring.keyFileName)"
        let ids = summary.keyIDs.map { "\"\($0)\"" }.joined(separator: ", ")
        if summary.keyIDs.isEmpty {
            lines.append("No secret in it is sealed; the broker seals them with its key on their next write.")
        } else if keyring != nil {
            lines.append(
                "Every secret opens with the key in \(keySource) (key id \(ids)): start the broker on \(directory) with that key.")
        } else {
            lines.append(
                "Its secrets are sealed with key id \(ids), and the key is not in the backup: start the broker with the key of the "
                    + "broker that wrote it, in \(EncryptionKeyring.environmentVariable) or copied to \(directory)/\(EncryptionKeyring.keyFileName) "
                    + "(without it the broker refuses to start: missing encryption key; it never generates a new one here)."
            )
        }
        return lines.joined(separator: "\n")
    }
}
