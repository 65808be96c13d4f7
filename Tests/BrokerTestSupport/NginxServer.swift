import Foundation
import Glibc

/// A real nginx on loopback with server blocks a test writes, listening on free ports, stopped when the scope ends.
///
/// nginx is found on PATH or in /usr/sbin; when it is not installed the test fails
/// naming the package, never skips. A port picked free can be taken by another
/// listener before nginx binds it: nginx is then started again on other ports.
public final class NginxServer: @unchecked Sendable {
    // @unchecked: `process` and `ports` are set by `start` and cleared by `stop`, which the one owning test calls in turn.

    /// The directory holding nginx's configuration, logs and temporary files.
    public let directory: String
    /// The ports nginx listens on, in the order the server blocks were given them.
    public private(set) var ports: [Int]
    private var process: ChildProcess?

    private init(directory: String, ports: [Int]) {
        self.directory = directory
        self.ports = ports
    }

    /// Starts nginx on `portCount` free ports with the server blocks `servers` writes for them (each must
    /// `listen 127.0.0.1:<port>`); stopped, and its directory removed, when the current ``TestScope`` ends.
    public static func scoped(portCount: Int = 1, servers: @escaping ([Int]) -> String) async throws -> NginxServer {
        let directory = try TemporaryDirectory.scoped(prefix: "broker-nginx")
        let server = try await start(in: directory, portCount: portCount, servers: servers)
        TestScope.required("an nginx server")?.onEnd { await server.stop() }
        return server
    }

    /// Starts nginx in `directory` (which the caller removes); the caller stops it.
    public static func start(in directory: String, portCount: Int, servers: ([Int]) -> String) async throws -> NginxServer {
        let nginx = try TestTools.path("nginx", package: "nginx")
        let server = NginxServer(directory: directory, ports: try freePorts(portCount))
        for _ in 0..<5 {
            if try await server.launch(nginx, servers: servers(server.ports)) { return server }
            await server.stop()
            server.ports = try freePorts(portCount)
        }
        throw ChildProcessError("nginx found a port taken at each of 5 starts")
    }

    /// Stops nginx (SIGKILL) and waits until it is gone. nginx runs as one process (`master_process off`): a master
    /// killed so would leave its workers running, holding the ports, for the rest of the run.
    public func stop() async {
        if let process {
            self.process = nil
            process.signal(SIGKILL)
            _ = await offPool { process.waitUntilExit() }
        }
    }

    /// nginx's error log so far.
    public var errorLog: String { (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? "" }

    private static func freePorts(_ count: Int) throws -> [Int] {
        try (0..<count).map { _ in try Loopback.freePort() }
    }

    /// Starts nginx; true once it listens on every port, false when a port is another process's.
    private func launch(_ nginx: String, servers: String) async throws -> Bool {
        let d = directory
        try """
        daemon off;
        master_process off;
        pid \(d)/nginx.pid;
        error_log \(d)/error.log;
        events { worker_connections 64; }
        http {
            access_log off;
            client_body_temp_path \(d)/body;
            proxy_temp_path \(d)/proxy;
            fastcgi_temp_path \(d)/fastcgi;
            uwsgi_temp_path \(d)/uwsgi;
            scgi_temp_path \(d)/scgi;
            default_type text/plain;
        \(servers)
        }
        """.write(toFile: d + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: nginx, arguments: ["-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"],
            environment: ProcessInfo.processInfo.environment, stdout: .discard, stderr: .capture)
        self.process = process
        let ports = self.ports
        for _ in 0..<400 {
            if await offPool({ ports.allSatisfy(Self.accepts) }) && process.isRunning {
                return Self.listens(on: ports, pid: process.pid)
            }
            guard process.isRunning else {
                if errorLog.contains("Address already in use") { return false }
                throw ChildProcessError("nginx exited at start-up: \(process.errorText) \(errorLog)")
            }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
        throw ChildProcessError("nginx did not listen within 10 s")
    }

    /// Whether each of `ports` on 127.0.0.1 is a listening socket that process `pid` holds (from /proc/net/tcp and
    /// /proc/PID/fd); nginx's master opens every listener before it forks its worker.
    private static func listens(on ports: [Int], pid: pid_t) -> Bool {
        // Read to the end: /proc/net/tcp comes a page per read, and reading by the file's size (0) stops early.
        guard let file = FileHandle(forReadingAtPath: "/proc/net/tcp"), let bytes = try? file.readToEnd(),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return false }
        let held = Set(
            descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") })
        try? file.close()
        var inodes: [Int: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
            // sl local_address rem_address st … inode: a listener is state 0A on 0100007F:PORT (hex).
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A", fields[1].hasPrefix("0100007F:"),
                let port = Int(fields[1].dropFirst(9), radix: 16)
            else { continue }
            inodes[port] = String(fields[9])
        }
        return ports.allSatisfy { port in inodes[port].map { held.contains("socket:[\($0)]") } ?? false }
    }

    /// Whether something accepts a TCP connection on `port` of 127.0.0.1.
    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = Loopback.address(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
