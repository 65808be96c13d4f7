import BrokerTestSupport
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The real `token-broker` executable started as a child process (``ChildProcess``, not Foundation's `Process`,
/// whose `run()` now and then crashes a suite that starts hundreds of children), its stdout and stderr captured.
final class BrokerProcess: @unchecked Sendable {
    // @unchecked: driven by one test at a time; `process` and `port` are set once in `init`; blocking waits run on
    // threads of their own (offPool); the output buffers lock themselves.
    let process: ChildProcess
    private(set) var port = 0

    /// Path of the built executable (`swift build` puts it next to the test bundle).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["TOKEN_BROKER_BIN"] { return URL(fileURLWithPath: path) }
        var dir = URL(fileURLWithPath: #filePath)
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        return dir.appendingPathComponent(".build/debug/token-broker")
    }

    /// Starts the broker off the cooperative pool (start-up waits block) and returns once it listens;
    /// the current ``TestScope`` kills it when the test ends, if it still runs.
    ///
    /// The port is read from the JSON `listening` log line, or, with `ready`, from the first stdout line
    /// `ready` accepts (it returns the port).
    ///
    /// With `shell`, the broker is started by `/bin/sh`, which runs those commands first (`ulimit -n 256`, say)
    /// and then execs the broker in its place: the broker's process id is the shell's.
    ///
    /// `starting` is shown the log so far each time the wait looks at it, so a test can act on what the broker
    /// says before it listens ("waiting for Redis").
    static func start(
        environment: [String: String], arguments: [String] = [], shell: String? = nil,
        ready: (@Sendable (String) -> Int?)? = nil, starting: (@Sendable (String) -> Void)? = nil
    ) async throws -> BrokerProcess {
        let broker = try await offPool {
            try BrokerProcess(environment: environment, arguments: arguments, shell: shell, ready: ready, starting: starting)
        }
        TestScope.required("a broker process")?.onEnd { await broker.kill() }
        guard broker.port > 0 else { throw BrokerProcessError.didNotStart(broker.log + broker.stdout) }
        return broker
    }

    /// How a start ended: listening, or exited with a status before it listened.
    enum Launch {
        case listening(BrokerProcess)
        case exited(status: Int32, log: String)
    }

    /// Starts the broker and reports whether it came to listen or exited first (a refusal at start-up).
    static func launch(environment: [String: String], arguments: [String] = []) async throws -> Launch {
        let broker = try await offPool {
            try BrokerProcess(environment: environment, arguments: arguments, shell: nil, ready: nil, starting: nil)
        }
        TestScope.required("a broker process")?.onEnd { await broker.kill() }
        if broker.port > 0 { return .listening(broker) }
        guard let status = await broker.waitForExit(timeout: 60) else { throw BrokerProcessError.didNotStart(broker.log) }
        return .exited(status: status, log: broker.log)
    }

    /// SIGKILL unless it has exited, then waits for it, off the cooperative pool.
    func kill() async {
        await offPool { [self] in
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Starts the broker with `environment` (plus a free port) and waits until it listens or exits
    /// (``port`` stays 0 then); throws when it does neither within a minute (a bound on a failing start).
    private init(
        environment: [String: String], arguments: [String], shell: String?, ready: (@Sendable (String) -> Int?)?,
        starting: (@Sendable (String) -> Void)?
    ) throws {
        var env = ["BROKER_PORT": "0", "BROKER_LOG_FORMAT": "json", "PATH": "/usr/bin:/bin"]
        env.merge(environment) { $1 }
        let (executable, argv) =
            shell.map { ("/bin/sh", ["-c", $0 + "; exec \"$0\" \"$@\"", Self.executable.path] + arguments) }
            ?? (Self.executable.path, arguments)
        process = try ChildProcess(executable: executable, arguments: argv, environment: env, stdout: .capture, stderr: .capture)
        let (output, errors) = (process.standardOutput, process.standardError)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            starting?(errors.text)
            if let ready {
                if let p = output.text.split(separator: "\n").lazy.compactMap({ ready(String($0)) }).first { port = p; return }
            } else if let range = errors.text.range(of: "\"port\":") {
                let digits = errors.text[range.upperBound...].prefix { $0.isNumber }
                if let p = Int(digits), p > 0 { port = p; return }
            }
            if !process.isRunning { return }
            usleep(20_000)
        }
        throw BrokerProcessError.didNotStart(errors.text + output.text)
    }

    /// Everything the broker wrote to stderr so far.
    var log: String { process.errorText }
    /// Everything the broker wrote to stdout so far.
    var stdout: String { process.outputText }
    /// The broker's process id.
    var pid: pid_t { process.pid }

    /// Sends a signal, if it still runs.
    func signal(_ number: Int32) { process.signal(number) }

    /// Waits for exit up to `timeout` seconds, off the cooperative pool; the exit status, or nil if still running.
    /// Output written just before the exit is read in too.
    func waitForExit(timeout: Double) async -> Int32? {
        await offPool { self.blockingWaitForExit(timeout: timeout) }
    }

    private func blockingWaitForExit(timeout: Double) -> Int32? {
        guard let status = process.waitForExit(timeout: timeout) else { return nil }
        // The readers run on threads of their own: let them take the last bytes.
        process.drainOutput()
        return status
    }
}

enum BrokerProcessError: Error { case didNotStart(String) }

/// Runs the `token-broker` executable to completion off the cooperative pool; (exit status, stdout, stderr).
/// `stdin` is the descriptor it reads (a pseudo-terminal's, see ``PseudoTerminal``), /dev/null when nil.
func runBrokerCapturingOutput(_ arguments: [String], environment: [String: String], stdin: Int32? = nil) async throws -> (
    status: Int32, stdout: String, stderr: String
) {
    try await offPool {
        let process = try ChildProcess(
            executable: BrokerProcess.executable.path, arguments: arguments, environment: environment,
            stdout: .capture, stderr: .capture, stdin: stdin)
        let status = process.waitUntilExit()
        process.drainOutput()
        return (status, process.outputText, process.errorText)
    }
}

/// Runs the `token-broker` executable to completion off the cooperative pool; (exit status, stderr).
func runBroker(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
    try await offPool {
        let process = try ChildProcess(
            executable: BrokerProcess.executable.path, arguments: arguments, environment: environment,
            stdout: .discard, stderr: .capture)
        let status = process.waitUntilExit()
        process.drainOutput()
        return (status, process.errorText)
    }
}
