import BrokerCore
import Glibc

/// The broker's data directory (`BROKER_DATA_DIR`): private to its owner, probed for writability, home of generated secrets.
public enum DataDirectory {
    /// Creates `path` and any missing parents with mode 0700, and sets an existing `path` to 0700.
    ///
    /// Parents that already exist keep their mode; only directories this call
    /// creates and `path` itself are made private.
    public static func prepare(_ path: String) throws(StoreError) {
        guard !path.isEmpty else { throw .unavailable("data directory path is empty") }
        // Never chmod the file system root: a data directory of "/" is a configuration mistake.
        guard path.contains(where: { $0 != "/" }) else { throw .unavailable("data directory must not be \"/\"") }
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            guard mkdir(prefix, 0o700) == 0 || errno == EEXIST else { throw .posix("create directory", prefix) }
        }
        var status = stat()
        guard stat(path, &status) == 0 else { throw .posix("stat", path) }
        guard status.st_mode & S_IFMT == S_IFDIR else { throw .unavailable("\(path) exists and is not a directory") }
        guard chmod(path, 0o700) == 0 else { throw .posix("chmod 0700", path) }
    }

    /// Whether a file can really be created, written, synced and removed in `path` right now.
    ///
    /// Permission bits say little when running as root or on a read-only or
    /// full file system, so this makes a small file and removes it.
    public static func isWritable(_ path: String) -> Bool {
        let probe = path + "/.probe" + DurableFile.temporaryMarker + DurableFile.randomSuffix()
        let descriptor = open(probe, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        var byte: UInt8 = 0x0A
        let written = write(descriptor, &byte, 1)
        let synced = fsync(descriptor)
        let closed = close(descriptor)
        let removed = unlink(probe)
        return written == 1 && synced == 0 && closed == 0 && removed == 0
    }

    /// ``isWritable(_:)`` run on the stores' I/O queues, off Swift's cooperative threads (for `/readyz`).
    public static func probeWritable(_ path: String) async -> Bool {
        (try? await BlockingIO.run { () throws(StoreError) -> Bool in isWritable(path) }) ?? false
    }

    /// The content of the secret file `name` in `directory`, created once from `generate()` with mode 0600.
    ///
    /// Creation is durable and race-free across processes: the new file is
    /// linked into place only if no file of that name exists, so two processes
    /// starting together end up with the same secret. An existing file that is
    /// readable by others is set back to 0600; an empty one is reported corrupt.
    public static func readOrCreateSecret(named name: String, in directory: String, generate: () -> [UInt8]) throws(StoreError) -> [UInt8] {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw .unavailable("secret file name \"\(name)\" is not a plain file name")
        }
        let path = directory + "/" + name
        if let existing = try readSecret(path) { return existing }
        removeAbandonedTemporaries(of: name, in: directory)
        let secret = generate()
        guard !secret.isEmpty else { throw .unavailable("generated secret for \(path) is empty") }
        let temporary = DurableFile.temporaryPath(for: path)
        try DurableFile.write(secret, to: temporary)
        defer { unlink(temporary) }
        // link(2) fails with EEXIST instead of replacing, unlike rename(2): the first creator wins.
        guard link(temporary, path) == 0 else {
            guard errno == EEXIST else { throw .posix("create", path) }
            guard let winner = try readSecret(path) else { throw .unavailable("secret file \(path) vanished while being created") }
            return winner
        }
        unlink(temporary)
        try DurableFile.syncDirectory(directory)
        return secret
    }

    /// Removes temporary copies of secret `name` left by a start killed mid-way, once they are a minute old.
    ///
    /// A younger one may belong to another process creating the same secret right now;
    /// it removes its own copy when it is done.
    private static func removeAbandonedTemporaries(of name: String, in directory: String) {
        guard let names = try? DirectoryListing.names(in: directory) else { return }
        let cutoff = time(nil) - 60
        for candidate in names
        where candidate.hasPrefix(name) && DurableFile.hasRandomSuffix(candidate, marker: DurableFile.temporaryMarker)
            && candidate.utf8.count == name.utf8.count + DurableFile.temporaryMarker.utf8.count + 16
        {
            var status = stat()
            let path = directory + "/" + candidate
            if stat(path, &status) == 0, status.st_mtim.tv_sec < cutoff { unlink(path) }
        }
    }

    private static func readSecret(_ path: String) throws(StoreError) -> [UInt8]? {
        guard let bytes = try DurableFile.read(path) else { return nil }
        guard !bytes.isEmpty else { throw .corrupt(path: path, reason: "the secret file is empty") }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            guard chmod(path, 0o600) == 0 else { throw .posix("chmod 0600", path) }
        }
        return bytes
    }
}
