import BrokerTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real executable under a small open-file limit (`ulimit -n`): it raises its soft limit to the hard one, keeps
/// its connection cap below what the descriptors allow, says so at start-up, and stays reachable when more idle
/// connections arrive than it has descriptors for.
@Suite(.serialized, .scoped) struct DescriptorBudgetTests {
    /// The first number after `"name":` in the broker's log, or nil.
    static func logged(_ name: String, in log: String) -> Int? {
        guard let range = log.range(of: "\"\(name)\":") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// Opens `count` connections that send nothing; the kernel completes each handshake whether or not the broker accepts.
    static func idleConnections(_ count: Int, port: Int) throws -> [RawClient] {
        try (0..<count).map { _ in try RawClient(port: port) }
    }

    /// `/healthz` over a new connection; its status, or nil when no answer came within 15 s.
    static func healthz(_ port: Int) async throws -> Int? {
        let client = try RawClient(port: port)
        client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        return await client.readResponse()?.status
    }

    /// The descriptors the process `pid` has open now.
    static func openDescriptors(_ pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    @Test func moreIdleConnectionsThanDescriptorsLeaveHealthzAnswering() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-fds")
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir], shell: "ulimit -n 256")
        let cap = Self.logged("max_connections", in: broker.log)
        #expect(cap.map { $0 < 256 - 32 } == true, "a start-up line names a cap that leaves descriptors for files and outbound calls")
        #expect(Self.logged("open_files_limit", in: broker.log) == 256)
        // More idle connections than the process may hold descriptors: the oldest are shed to make room.
        let idle = try Self.idleConnections(400, port: broker.port)
        #expect(try await Self.healthz(broker.port) == 200)
        #expect(await idle[0].readsEOF(), "the oldest idle connection was closed")
        // And it stays so: another wave, another probe.
        let more = try Self.idleConnections(400, port: broker.port)
        #expect(try await Self.healthz(broker.port) == 200)
        #expect(!broker.log.contains("Too many open files"), "accept never ran out of descriptors")
        withExtendedLifetime((idle, more)) {}
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-fds")
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir], shell: "ulimit -S -n 128; ulimit -H -n 600")
        #expect(Self.logged("open_files_limit", in: broker.log) == 600, "\(broker.log)")
        let limits = try String(contentsOfFile: "/proc/\(broker.pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
        #expect(line?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2) == ["600", "600"], "\(line ?? "")")
    }

    /// Descriptors can run out below the cap (files, outbound calls): the limit is lowered under the running
    /// broker (prlimit), so accept fails with EMFILE; the broker sheds idle connections and accepts the newcomer.
    @Test func anAcceptThatRunsOutOfDescriptorsShedsIdleConnectionsAndRetries() async throws {
        let dir = try TemporaryDirectory.scoped(prefix: "broker-fds")
        let broker = try await BrokerProcess.start(environment: ["BROKER_DATA_DIR": dir], shell: "ulimit -n 256")
        // Idle keep-alive connections, each answered once (so each was accepted and holds a descriptor).
        var idle: [RawClient] = []
        for _ in 0..<40 {
            let client = try RawClient(port: broker.port)
            client.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(await client.readResponse()?.status == 200)
            idle.append(client)
        }
        // Room for two more descriptors, then accept fails with EMFILE.
        let soft = Self.openDescriptors(broker.pid) + 2
        let (status, _, errors) = try await runCapturing("/usr/bin/prlimit", ["--pid", "\(broker.pid)", "--nofile=\(soft):256"])
        try #require(status == 0, "prlimit: \(errors)")
        let newcomers = try Self.idleConnections(10, port: broker.port)
        #expect(try await Self.healthz(broker.port) == 200)
        #expect(await idle[0].readsEOF(), "the oldest idle connection was shed")
        withExtendedLifetime((idle, newcomers)) {}
    }
}

/// Runs `executable` to completion off the cooperative pool; (exit status, stdout, stderr).
func runCapturing(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await offPool {
        let process = try ChildProcess(
            executable: executable, arguments: arguments, environment: ["PATH": "/usr/bin:/bin"], stdout: .capture, stderr: .capture)
        let status = process.waitUntilExit()
        process.drainOutput()
        return (status, process.outputText, process.errorText)
    }
}
