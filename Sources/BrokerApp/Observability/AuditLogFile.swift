import BrokerCore
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit file (`BROKER_AUDIT_LOG`): JSON lines appended to a file of their own, mode 0600.
///
/// Recording a line only appends to a buffer in memory; the first line of a batch schedules one write and one
/// `fsync` of everything gathered ``flushInterval`` seconds later, so a crash loses at most that interval's lines
/// and a busy server makes one write and one fsync per interval whatever its request rate. ``close()`` writes the rest.
final class AuditLogFile: Sendable {
    /// Seconds between background flushes.
    static let flushInterval = 0.5

    private let fd: Int32
    /// Lines not yet written, and whether ``close()`` ran (after which nothing is added, so nothing touches `fd`).
    private let buffer = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))
    private let queue = DispatchQueue(label: "token-broker.audit")

    /// Opens (or creates) `path` for appending; throws a message naming the problem.
    init(path: String) throws(ConfigurationError) {
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ConfigurationError(variable: "BROKER_AUDIT_LOG", message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // An existing file keeps its lines but no wider mode than the broker would give it.
        _ = fchmod(fd, 0o600)
        self.fd = fd
    }

    /// Appends one line (a newline is added); no system call.
    func append(_ line: String) {
        let first = buffer.withLock { buffer in
            guard !buffer.closed else { return false }
            let wasEmpty = buffer.bytes.isEmpty
            buffer.bytes.append(contentsOf: line.utf8)
            buffer.bytes.append(0x0A)
            return wasEmpty
        }
        if first { queue.asyncAfter(deadline: .now() + Self.flushInterval) { self.drain() } }
    }

    /// Writes and syncs everything gathered so far before returning.
    func flush() {
        queue.sync { drain() }
    }

    /// Writes the rest, syncs and closes; later lines are dropped.
    func close() {
        let wasClosed = buffer.withLock { buffer in
            defer { buffer.closed = true }
            return buffer.closed
        }
        guard !wasClosed else { return }
        queue.sync {
            drain()
            _ = Glibc.close(fd)
        }
    }

    /// Runs on ``queue``: one write of the buffer, then one fsync; after ``close()`` there is nothing left to write.
    private func drain() {
        let bytes = buffer.withLock { buffer in
            let taken = buffer.bytes
            buffer.bytes = []
            return taken
        }
        guard !bytes.isEmpty else { return }
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
        _ = fsync(fd)
    }
}
