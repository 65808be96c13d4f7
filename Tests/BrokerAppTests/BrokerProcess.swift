#if canImport(Glibc)
import Glibc
#endif
import BrokerTestSupport
import Foundation

/// The real `token-broker` executable started as a child process, its stdout and stderr captured.
final class BrokerProcess: @unchecked Sendable {
    // @unchecked: driven by one test at a time; `port` is set once in `init`; blocking waits run on threads
    // of their own (offPool); the output buffers lock themselves.
    let process = Process()
    private let outPipe = Pipe()
    private let errPipe = Pipe()
    private(set) var port = 0
    private let output = LockedBuffer()
    private let errors = LockedBuffer()

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
    static func start(environment: [String: String], arguments: [String] = [],
                      ready: (@Sendable (String) -> Int?)? = nil) async throws -> BrokerProcess {
        let broker = try await offPool { try BrokerProcess(environment: environment, arguments: arguments, ready: ready) }
        TestScope.required("a broker process")?.onEnd { await broker.kill() }
        return broker
    }

    /// SIGKILL unless it has exited, then waits for it, off the cooperative pool.
    func kill() async {
        await offPool { [self] in
            if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
    }

    /// Starts the broker with `environment` (plus a free port) and waits until it listens.
    private init(environment: [String: String], arguments: [String], ready: (@Sendable (String) -> Int?)?) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        var env = ["BROKER_PORT": "0", "BROKER_LOG_FORMAT": "json", "PATH": "/usr/bin:/bin"]
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = outPipe
        process.standardError = errPipe
        let (out, err) = (output, errors)
        outPipe.fileHandleForReading.readabilityHandler = { out.append($0.availableData) }
        errPipe.fileHandleForReading.readabilityHandler = { err.append($0.availableData) }
        try ProcessLaunch.run(process)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let ready {
                if let p = output.text.split(separator: "\n").lazy.compactMap({ ready(String($0)) }).first { port = p; return }
            } else if let range = errors.text.range(of: "\"port\":") {
                let digits = errors.text[range.upperBound...].prefix { $0.isNumber }
                if let p = Int(digits), p > 0 { port = p; return }
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw BrokerProcessError.didNotStart(errors.text + output.text)
    }

    /// Everything the broker wrote to stderr so far.
    var log: String { errors.text }
    /// Everything the broker wrote to stdout so far.
    var stdout: String { output.text }

    /// Sends a signal.
    func signal(_ number: Int32) { Glibc.kill(process.processIdentifier, number) }

    /// Waits for exit up to `timeout` seconds, off the cooperative pool; the exit status, or nil if still running.
    /// Output written just before the exit is read in too.
    func waitForExit(timeout: Double) async -> Int32? {
        await offPool { self.blockingWaitForExit(timeout: timeout) }
    }

    private func blockingWaitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        // The pipes' handlers run on their own queue: take the last bytes here.
        for (pipe, buffer) in [(outPipe, output), (errPipe, errors)] {
            pipe.fileHandleForReading.readabilityHandler = nil
            buffer.append(pipe.fileHandleForReading.readDataToEndOfFile())
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
    }
}

enum BrokerProcessError: Error { case didNotStart(String) }

/// Bytes appended from a pipe's handler thread and read from the test.
final class LockedBuffer: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var data = Data()
    func append(_ more: Data) { lock.lock(); data.append(more); lock.unlock() }
    var text: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}

/// Runs the `token-broker` executable to completion off the cooperative pool; (exit status, stderr).
func runBroker(_ arguments: [String], environment: [String: String]) async throws -> (Int32, String) {
    try await offPool {
        let process = Process()
        process.executableURL = BrokerProcess.executable
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try ProcessLaunch.run(process)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
