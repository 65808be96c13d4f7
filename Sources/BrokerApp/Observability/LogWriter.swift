import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Batches log lines and writes them to a file descriptor (stderr) off the request path.
///
/// Lines are appended under a lock; the first line of a batch schedules one `write(2)`
/// of everything gathered by then, so a busy server writes a few large chunks a second.
public final class LogWriter: Sendable {
    private let fd: Int32
    private let buffer = Mutex<[UInt8]>([])
    private let queue = DispatchQueue(label: "token-broker.log")

    /// Creates a writer for a descriptor (2 for stderr).
    public init(fd: Int32 = 2) {
        self.fd = fd
    }

    /// Appends one line (a newline is added).
    public func write(_ line: String) {
        let first = buffer.withLock { bytes in
            let wasEmpty = bytes.isEmpty
            bytes.append(contentsOf: line.utf8)
            bytes.append(0x0A)
            return wasEmpty
        }
        if first { queue.async { self.drain() } }
    }

    /// Writes everything gathered so far before returning (at exit).
    public func flush() {
        queue.sync { drain() }
    }

    private func drain() {
        let bytes = buffer.withLock { bytes in
            let taken = bytes
            bytes = []
            return taken
        }
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}
