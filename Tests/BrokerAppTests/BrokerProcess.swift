#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The real `token-broker` executable started as a child process on a free port.
final class BrokerProcess {
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

    /// Starts the broker with `environment` (plus a free port) and waits until it listens.
    init(environment: [String: String], arguments: [String] = []) throws {
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
        try process.run()
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

    /// Waits for exit up to `timeout` seconds; returns the exit status, or nil if still running.
    func waitForExit(timeout: Double) -> Int32? {
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

/// Minimal blocking HTTP GET for process tests.
enum HTTPGet {
    static func status(port: Int, path: String) -> (Int, String)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else { return nil }
        let request = "GET \(path) HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        _ = send(fd, request, request.utf8.count, Int32(MSG_NOSIGNAL))
        var data = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data.append(contentsOf: chunk[0..<n])
        }
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 "), let status = Int(text.dropFirst(9).prefix(3)) else { return nil }
        let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
        return (status, body)
    }
}
