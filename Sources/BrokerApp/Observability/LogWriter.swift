import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Batches log lines and writes them to a file descriptor (stderr) off the request path.
///
/// Lines are appended under a lock. The first line of a batch schedules one `write(2)` of everything gathered
/// ``delay`` seconds later, and a batch that grows past ``threshold`` bytes is written at once; so the writer's
/// thread wakes a few dozen times a second however many lines the request path logs, rather than once per line.
public final class LogWriter: Sendable {
    /// Seconds a line may wait for the rest of its batch.
    static let delay = 0.02
    /// Bytes of waiting lines past which the batch is written without waiting for ``delay``.
    static let threshold = 256 * 1024

    private let fd: Int32
    /// Lines not yet written, whether a write of them was already asked for ahead of the timer, and an emptied
    /// buffer of an earlier batch, its room kept, for the next batch to fill.
    private let buffer = Mutex<(bytes: [UInt8], urgent: Bool, spare: [UInt8])>(([], false, []))
    private let queue = DispatchQueue(label: "token-broker.log")

    /// Creates a writer for a descriptor (2 for stderr).
    public init(fd: Int32 = 2) {
        self.fd = fd
    }

    /// Appends one line (a newline is added).
    public func write(_ line: String) {
        var line = line
        line.withUTF8 { write(utf8: $0) }
    }

    /// Appends one line given as UTF-8 bytes (a newline is added).
    func write(utf8 line: UnsafeBufferPointer<UInt8>) {
        let wake = buffer.withLock { buffer -> Wake in
            let wasEmpty = buffer.bytes.isEmpty
            buffer.bytes.append(contentsOf: line)
            buffer.bytes.append(0x0A)
            if wasEmpty { return .later }
            if buffer.bytes.count >= Self.threshold && !buffer.urgent {
                buffer.urgent = true
                return .now
            }
            return .none
        }
        switch wake {
        case .none: break
        case .later: queue.asyncAfter(deadline: .now() + Self.delay) { self.drain() }
        case .now: queue.async { self.drain() }
        }
    }

    /// When the writer's thread is asked to write.
    private enum Wake { case none, later, now }

    /// Writes everything gathered so far before returning (at exit).
    public func flush() {
        queue.sync { drain() }
    }

    private func drain() {
        var bytes = buffer.withLock { buffer in
            // The next batch fills an earlier batch's buffer, emptied with its room kept: a new buffer for each batch
            // grew by doubling past the last one's size (a copy of the batch so far each time), a few hundred copies
            // of a dozen kilobytes in ten seconds of `GET /account`, and was allocated and faulted in again.
            var taken: [UInt8] = []
            swap(&taken, &buffer.bytes)
            swap(&buffer.bytes, &buffer.spare)
            buffer.urgent = false
            return taken
        }
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
        // A batch far beyond the threshold (the thread held up) is not kept.
        guard bytes.capacity <= 4 * Self.threshold else { return }
        bytes.removeAll(keepingCapacity: true)
        buffer.withLock { swap(&$0.spare, &bytes) }
    }
}
