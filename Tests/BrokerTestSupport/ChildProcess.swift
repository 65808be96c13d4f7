import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for tests that run real executables.
///
/// Foundation's `Process.run()` on Linux reads `/proc/self/fd` with a 256-byte copy of each
/// directory entry and crashes now and then when an entry ends a page (swift-corelibs-foundation
/// pull request 5472); a suite that starts hundreds of children hits it. This type spawns directly:
/// stdin from /dev/null (or a given descriptor), stdout and stderr to /dev/null or captured, every other descriptor closed
/// in the child, and the exit status reaped with `waitpid`.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `status` is guarded by `lock`; the output buffers lock themselves.
    public enum Output: Sendable { case discard, capture }

    public let pid: pid_t
    public let standardOutput = LockedBuffer()
    public let standardError = LockedBuffer()
    private let lock = NSLock()
    private var status: Int32?
    private var readers: [Thread] = []

    /// Spawns `executable` with `arguments` and exactly `environment`; `stdin`, when given, is the descriptor the child
    /// reads as its standard input (a pseudo-terminal, say) instead of /dev/null; the caller keeps and closes it.
    public init(
        executable: String, arguments: [String] = [], environment: [String: String],
        stdout: Output = .discard, stderr: Output = .capture, stdin: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdin {
            posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        var pipes: [(read: Int32, write: Int32, buffer: LockedBuffer)] = []
        for (fd, output, buffer) in [(Int32(1), stdout, standardOutput), (Int32(2), stderr, standardError)] {
            switch output {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_WRONLY, 0)
            case .capture:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw ChildProcessError("pipe failed: errno \(errno)") }
                for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                posix_spawn_file_actions_adddup2(&actions, ends[1], fd)
                pipes.append((ends[0], ends[1], buffer))
            }
        }
        Self.closeFrom(3, &actions)
        // The spawning thread may block signals (Dispatch workers do): the child starts with none
        // blocked and every signal at its default action, as a shell would start it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        for end in pipes { close(end.write) }
        guard result == 0 else {
            for end in pipes { close(end.read) }
            throw ChildProcessError("posix_spawn \(executable) failed: \(String(cString: strerror(result)))")
        }
        pid = child
        for end in pipes {
            let (fd, buffer) = (end.read, end.buffer)
            let reader = Thread {
                var chunk = [UInt8](repeating: 0, count: 16_384)
                while true {
                    let count = read(fd, &chunk, chunk.count)
                    if count > 0 { buffer.append(Data(chunk[0..<count])); continue }
                    if count < 0 && errno == EINTR { continue }
                    break
                }
                close(fd)
            }
            reader.start()
            readers.append(reader)
        }
    }

    /// Asks glibc to close every descriptor from `lowest` up in the child (glibc 2.34 and later;
    /// looked up at run time because the Glibc module does not export the `_np` name).
    private static func closeFrom(_ lowest: Int32, _ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, lowest)
    }

    /// Whether the child has not exited yet (reaps it when it has).
    public var isRunning: Bool { exitStatus() == nil }

    /// The exit status (128 + signal number when a signal ended it); nil while running.
    public var terminationStatus: Int32? { exitStatus() }

    /// Blocks until the child exits; its status.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        while true {
            if let status = exitStatus() { return status }
            usleep(5_000)
        }
    }

    /// Polls up to `timeout` seconds; the status, or nil if still running.
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = exitStatus() { return status }
            usleep(10_000)
        }
        return exitStatus()
    }

    /// Sends `number` to the child if it still runs.
    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// Everything the child wrote to stderr so far.
    public var errorText: String { standardError.text }

    /// Everything the child wrote to stdout so far.
    public var outputText: String { standardOutput.text }

    /// Waits until the captured streams reached end of file (after exit).
    public func drainOutput(timeout: Double = 30) {
        let deadline = Date().addingTimeInterval(timeout)
        while readers.contains(where: { !$0.isFinished }) && Date() < deadline { usleep(5_000) }
    }

    /// The status once the child has exited, reaping it without blocking; nil while it runs.
    private func exitStatus() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        let reaped = waitpid(pid, &raw, WNOHANG)
        guard reaped == pid else { return nil }
        let signal = raw & 0x7f
        status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return status
    }

    deinit {
        if exitStatus() == nil {
            kill(pid, SIGKILL)
            waitUntilExit()
        }
    }
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Bytes appended from a reader thread and read from the test.
public final class LockedBuffer: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var data = Data()
    public init() {}
    public func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    public var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
    public var bytes: Data { lock.lock(); defer { lock.unlock() }; return data }
}
