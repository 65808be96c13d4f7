import BrokerCore
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The audit file (`BROKER_AUDIT_LOG`): JSON lines appended to a file of their own, mode 0600, by this process only.
///
/// Recording a line only appends to a buffer in memory. The first line of a batch schedules one write and one
/// `fsync` of everything gathered ``flushInterval`` seconds later (a batch past ``flushBytes`` is written at once),
/// so a crash loses at most that interval's lines and a busy server makes a few writes a second whatever its
/// request rate. ``close()`` writes the rest.
///
/// A write the disk cuts short (full, or over a size limit) is cut back to the last whole line with `ftruncate`, as
/// the store's journals do, so no half line is left to be glued to the next one. The lines stay in memory and are
/// written again every ``flushInterval`` until the disk takes them; meanwhile ``health`` reports the failure (and
/// `/readyz` with it). Past ``retainBytes`` waiting (a failing or very slow disk), further lines are counted as lost,
/// as are lines still unwritten at ``close()``; losses are logged as ERROR lines with the count.
final class AuditLogFile: Sendable {
    /// Seconds between background flushes, and between attempts while writes fail.
    static let flushInterval = 0.5
    /// Bytes waiting past which a batch is written without waiting for the interval.
    static let flushBytes = 2 * 1024 * 1024
    /// Bytes kept waiting while writes fail, by default (about 60,000 events).
    static let defaultRetainBytes = 16 * 1024 * 1024

    /// What the file's writer has done: events lost, events waiting, and why writes fail now (nil when they do not).
    struct Health: Sendable, Equatable {
        /// Events dropped since start: past ``retainBytes`` while writes failed, or unwritten at ``close()``.
        var lost: UInt64 = 0
        /// Events recorded and not yet written.
        var unwritten = 0
        /// The error of the last write when it failed (`No space left on device`); nil once a write succeeds.
        var failure: String?
    }

    private struct State {
        var bytes: [UInt8] = []
        /// An emptied buffer of an earlier batch, its room kept, for the next batch to fill (see ``drain(timer:)``).
        var spare: [UInt8] = []
        var health = Health()
        /// Losses not yet logged.
        var lostUnreported = 0
        /// Whether a drain is scheduled on the timer, and whether one was asked for at once.
        var scheduled = false
        var urgent = false
        /// Set by ``close()``; nothing is added afterwards, so nothing touches `fd`.
        var closed = false
    }

    private let fd: Int32
    private let path: String
    private let logger: BrokerLogger?
    private let retainBytes: Int
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "token-broker.audit")
    /// Bytes of a torn last line cut off when the file was opened (a crash mid-write); 0 when it ended whole.
    let cutAtOpen: Int

    /// Opens (or creates) `path` for appending; throws a message naming the problem. Failures and losses are logged
    /// through `logger`.
    init(path: String, logger: BrokerLogger? = nil, retainBytes: Int = AuditLogFile.defaultRetainBytes) throws(ConfigurationError) {
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ConfigurationError(variable: "BROKER_AUDIT_LOG", message: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // An existing file keeps its lines but no wider mode than the broker would give it.
        _ = fchmod(fd, 0o600)
        self.fd = fd
        self.path = path
        self.logger = logger
        self.retainBytes = retainBytes
        cutAtOpen = Self.cutTornTail(fd)
    }

    /// Appends one line (a newline is added); no system call.
    func append(_ line: String) {
        var line = line
        line.withUTF8 { append(utf8: $0) }
    }

    /// Appends one line given as UTF-8 bytes (a newline is added); no system call.
    func append(utf8 line: UnsafeBufferPointer<UInt8>) {
        let wake = state.withLock { s -> Wake in
            guard !s.closed else { return .none }
            // Memory is bounded whatever the disk does; a healthy disk takes a batch long before this.
            if s.bytes.count + line.count + 1 > retainBytes {
                s.health.lost &+= 1
                s.lostUnreported += 1
                return .none
            }
            s.bytes.append(contentsOf: line)
            s.bytes.append(0x0A)
            s.health.unwritten += 1
            if !s.scheduled {
                s.scheduled = true
                return .later
            }
            if s.bytes.count >= Self.flushBytes && !s.urgent && s.health.failure == nil {
                s.urgent = true
                return .now
            }
            return .none
        }
        switch wake {
        case .none: break
        case .later: queue.asyncAfter(deadline: .now() + Self.flushInterval) { self.drain(timer: true) }
        case .now: queue.async { self.drain(timer: false) }
        }
    }

    /// When the writer's thread is asked to write.
    private enum Wake { case none, later, now }

    /// What the writer has done so far.
    var health: Health { state.withLock { $0.health } }

    /// Writes and syncs everything gathered so far before returning (one attempt).
    func flush() {
        queue.sync { drain(timer: false) }
    }

    /// Writes the rest, syncs and closes; what cannot be written now is lost (and logged), later lines are dropped.
    func close() {
        let wasClosed = state.withLock { s in
            defer { s.closed = true }
            return s.closed
        }
        guard !wasClosed else { return }
        queue.sync {
            drain(timer: false)
            let unwritten = state.withLock { s in
                let count = s.health.unwritten
                s.health.lost &+= UInt64(count)
                s.lostUnreported += count
                s.health.unwritten = 0
                s.bytes = []
                return count
            }
            if unwritten > 0 || state.withLock({ $0.lostUnreported }) > 0 { reportLosses(atClose: true) }
            _ = Glibc.close(fd)
        }
    }

    /// Runs on ``queue``: one write of the buffer, then one fsync; on failure the buffer is kept for the next attempt.
    private func drain(timer: Bool) {
        let (bytes, lines, wasFailing) = state.withLock { s in
            // The next batch fills an earlier batch's buffer, emptied with its room kept: a new buffer for each batch
            // grew by doubling past the last one's size, a copy of the batch so far each time, and was allocated and
            // faulted in again.
            var taken: [UInt8] = []
            swap(&taken, &s.bytes)
            swap(&s.bytes, &s.spare)
            let batch = (taken, s.health.unwritten, s.health.failure != nil)
            s.health.unwritten = 0
            s.urgent = false
            if timer { s.scheduled = false }
            return batch
        }
        var failure: String?
        if !bytes.isEmpty {
            failure = write(bytes)
            if failure == nil { _ = fsync(fd) }
        }
        let retry = state.withLock { s -> Bool in
            if let failure {
                // Back in front of what arrived meanwhile, in order.
                s.bytes = bytes + s.bytes
                s.health.unwritten += lines
                s.health.failure = failure
                guard !s.scheduled, !s.closed else { return false }
                s.scheduled = true
                return true
            }
            if !bytes.isEmpty { s.health.failure = nil }
            return false
        }
        if retry { queue.asyncAfter(deadline: .now() + Self.flushInterval) { self.drain(timer: true) } }
        if let failure, !wasFailing {
            logger?.log(
                .error, "audit log write failed; its events wait in memory and are written again every 0.5 s",
                [("path", .string(path)), ("reason", .string(failure)), ("unwritten", .int(lines))])
        } else if failure == nil && wasFailing && !bytes.isEmpty {
            logger?.log(.info, "audit log writable again", [("path", .string(path)), ("written", .int(lines))])
        }
        if state.withLock({ $0.lostUnreported }) > 0 { reportLosses(atClose: false) }
        if failure == nil { keepAsSpare(bytes) }
    }

    /// Empties a written batch's buffer and keeps it, with its room, for a later batch to fill; not one that a
    /// backlog made far larger than a batch.
    private func keepAsSpare(_ batch: consuming [UInt8]) {
        guard batch.capacity <= 4 * Self.flushBytes else { return }
        batch.removeAll(keepingCapacity: true)
        state.withLock { swap(&$0.spare, &batch) }
    }

    /// Writes `bytes` at the end of the file; nil when all were written, else the error, with the file cut back to
    /// its length before the write (a partial line must not be left to run into the next one).
    private func write(_ bytes: [UInt8]) -> String? {
        let start = lseek(fd, 0, SEEK_END)
        var offset = 0
        var code: Int32 = 0
        bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    code = n < 0 ? errno : ENOSPC
                    return
                }
            }
        }
        guard code != 0 else { return nil }
        if offset > 0 && start >= 0 && ftruncate(fd, start) != 0 {
            logger?.log(
                .error, "audit log: cannot cut a short write back; the file ends in a partial line",
                [("path", .string(path)), ("reason", .string(String(cString: strerror(errno))))])
        }
        return String(cString: strerror(code))
    }

    /// Logs the events lost since the last report as one ERROR line.
    private func reportLosses(atClose: Bool) {
        let (count, total, failure) = state.withLock { s in
            defer { s.lostUnreported = 0 }
            return (s.lostUnreported, s.health.lost, s.health.failure)
        }
        guard count > 0 else { return }
        logger?.log(
            .error,
            atClose
                ? "audit events lost: the audit log could not be written before shutdown"
                : "audit events lost: the audit log cannot be written and its waiting events fill the memory kept for them",
            [
                ("path", .string(path)), ("count", .int(count)), ("lost_total", .int(Int(truncatingIfNeeded: total))),
                ("reason", .string(failure ?? "unknown")),
            ])
    }

    /// Cuts a last line without its newline (a crash mid-write, or an earlier version's short write) off the end of
    /// the file; returns the bytes cut.
    private static func cutTornTail(_ fd: Int32) -> Int {
        let size = lseek(fd, 0, SEEK_END)
        guard size > 0 else { return 0 }
        var chunk = [UInt8](repeating: 0, count: 4096)
        var end = size
        while end > 0 {
            let start = max(0, end - off_t(chunk.count))
            let n = pread(fd, &chunk, Int(end - start), start)
            guard n == Int(end - start) else { return 0 }
            if end == size && chunk[n - 1] == 0x0A { return 0 }
            if let last = chunk[0..<n].lastIndex(of: 0x0A) {
                let keep = start + off_t(last) + 1
                return ftruncate(fd, keep) == 0 ? Int(size - keep) : 0
            }
            end = start
        }
        return ftruncate(fd, 0) == 0 ? Int(size) : 0
    }
}
