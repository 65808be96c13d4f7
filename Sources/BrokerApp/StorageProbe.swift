#if canImport(Glibc)
import Glibc
#endif

/// Prepares the data directory and checks that it really takes durable writes.
enum StorageProbe {
    /// Creates the directory (and parents) with mode 0700, or tightens an existing one to 0700.
    static func prepare(_ path: String) throws(ConfigurationError) {
        var components: [String] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            components.append(String(part))
            let prefix = components.joined(separator: "/")
            guard !prefix.isEmpty, prefix != "." else { continue }
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
        if chmod(path, 0o700) != 0 {
            throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "cannot set mode 0700 on \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Nil when a small file can be created, synced and removed; else the reason.
    static func writableProblem(_ path: String) -> String? {
        let probe = path + "/.readyz-probe"
        let fd = open(probe, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "storage_not_writable" }
        defer { close(fd); unlink(probe) }
        let ok = write(fd, "ok", 2) == 2 && fsync(fd) == 0
        return ok ? nil : "storage_not_writable"
    }
}
