#if canImport(Glibc)
import Glibc
#endif
import BrokerTestSupport
import Foundation

/// The real `token-broker` executable started as a child process on a free port.
final class BrokerProcess: @unchecked Sendable {
    // @unchecked: driven by one test at a time; blocking waits run on threads of their own (offPool).
    let process = Process()
    let stderrPipe = Pipe()
    private(set) var port = 0
    private let output = LockedBuffer()

    /// Path of the built executable (`swift build` puts it next to the test bundle).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["TOKEN_BROKER_BIN"] { return URL(fileURLWithPath: path) }
        var dir = URL(fileURLWithPath: #filePath)
        while dir.path != "/" && !FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
            dir.deleteLastPathComponent()
        }
        return dir.appendingPathComponent(".build/debug/token-broker")
    }

    /// Starts the broker off the cooperative pool (start-up waits block) and returns once it listens.
    static func start(environment: [String: String], arguments: [String] = []) async throws -> BrokerProcess {
        try await offPool { try BrokerProcess(environment: environment, arguments: arguments) }
    }

    /// Starts the broker with `environment` (plus a free port) and waits until it listens.
    private init(environment: [String: String], arguments: [String] = []) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
        var env = ["BROKER_PORT": "0", "BROKER_LOG_FORMAT": "json", "PATH": "/usr/bin:/bin"]
        env.merge(environment) { $1 }
        process.environment = env
        process.standardError = stderrPipe
        process.standardOutput = FileHandle.nullDevice
        let buffer = output
        stderrPipe.fileHandleForReading.readabilityHandler = { handle in
            buffer.append(handle.availableData)
        }
        try ProcessLaunch.run(process)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let range = output.text.range(of: "\"port\":") {
                let digits = output.text[range.upperBound...].prefix { $0.isNumber }
                if let p = Int(digits), p > 0 { port = p; return }
            }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw BrokerProcessError.didNotStart(output.text)
    }

    /// Everything the broker wrote to stderr so far.
    var log: String { output.text }

    /// Sends a signal.
    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for exit up to `timeout` seconds, off the cooperative pool; the exit status, or nil if still running.
    func waitForExit(timeout: Double) async -> Int32? {
        (try? await offPool { self.blockingWaitForExit(timeout: timeout) }) ?? nil
    }

    private func blockingWaitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
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

/// Runs the `token-broker` executable to completion off the cooperative pool; (exit status, stdout, stderr).
func runBrokerCapturingOutput(_ arguments: [String], environment: [String: String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await offPool {
        let directory = NSTemporaryDirectory() + "broker-output-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Files rather than pipes: neither stream can fill up and block the other.
        let out = directory + "/stdout", err = directory + "/stderr"
        FileManager.default.createFile(atPath: out, contents: nil)
        FileManager.default.createFile(atPath: err, contents: nil)
        let process = Process()
        process.executableURL = BrokerProcess.executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
        try ProcessLaunch.run(process)
        process.waitUntilExit()
        let text = { (path: String) in String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self) }
        return (process.terminationStatus, text(out), text(err))
    }
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
