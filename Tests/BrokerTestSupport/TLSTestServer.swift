import Foundation
import Glibc

/// A real nginx on loopback serving HTTPS with certificates made at test time by the `openssl` CLI from a test CA.
///
/// Each ``Case`` is a server block on its own port: a valid chain for `localhost`,
/// an expired one, one not yet valid, one for another host, a self-signed one, one
/// from a CA the client does not know, and a TLS 1.0-only server. The client is
/// given ``caFile`` (the test CA) to add to the system's store. When `nginx` or
/// `openssl` is not installed the tests fail naming the package; they never skip.
public final class TLSTestServer: @unchecked Sendable {
    // @unchecked: `process` is set in `start` and cleared by `stop`, which the one owning test calls in turn.

    /// What a server block presents.
    public enum Case: String, CaseIterable, Sendable {
        case valid, expired, notYetValid, wrongHost, selfSigned, unknownCA, tls10Only
    }

    /// The PEM file of the test CA that signs every case's certificate but `selfSigned` and `unknownCA`.
    public let caFile: String
    private let directory: String
    private var ports: [Case: Int]
    private var process: ChildProcess?

    private init(directory: String, ports: [Case: Int]) {
        self.directory = directory
        self.ports = ports
        caFile = directory + "/ca.pem"
    }

    /// An `https://localhost:port` URL of `path` on the block serving `which`.
    public func url(_ which: Case, path: String = "/") -> String {
        "https://localhost:\(ports[which] ?? 0)\(path)"
    }

    /// The port of the block serving `which`.
    public func port(_ which: Case) -> Int { ports[which] ?? 0 }

    /// Makes the certificates, starts nginx and waits until every block accepts connections; stopped when the scope ends.
    public static func scoped() async throws -> TLSTestServer {
        let server = try await start()
        TestScope.required("an nginx TLS server")?.onEnd { await server.stop() }
        return server
    }

    /// Makes the certificates and starts nginx; the caller stops it.
    public static func start() async throws -> TLSTestServer {
        let nginx = try TestTools.path("nginx", package: "nginx")
        let openssl = try TestTools.path("openssl", package: "openssl")
        let directory = NSTemporaryDirectory() + "/broker-tls-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/ca-new", withIntermediateDirectories: true)
        let server = TLSTestServer(directory: directory, ports: try freePorts())
        do {
            try await server.makeCertificates(openssl)
            // A port picked free can be taken by another listener before nginx binds it (another test's nginx,
            // say): then something else answers there, so nginx is started again on other ports.
            for _ in 0..<5 {
                if try await server.launch(nginx) { return server }
                await server.kill()
                server.ports = try freePorts()
            }
            throw ChildProcessError("nginx found a port taken at each of 5 starts")
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Stops nginx and removes the directory.
    public func stop() async {
        await kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func kill() async {
        if let process {
            self.process = nil
            process.signal(SIGKILL)
            _ = await offPool { process.waitUntilExit() }
        }
    }

    private static func freePorts() throws -> [Case: Int] {
        var ports: [Case: Int] = [:]
        for which in Case.allCases { ports[which] = try Loopback.freePort() }
        return ports
    }

    // MARK: Certificates

    private func makeCertificates(_ openssl: String) async throws {
        let d = directory
        try "".write(toFile: d + "/index.txt", atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: d + "/serial", atomically: true, encoding: .utf8)
        // `openssl ca`, not `x509 -req`: only it sets an arbitrary start and end date (for expired and not yet valid).
        try """
        [ca]
        default_ca = test
        [test]
        database = \(d)/index.txt
        new_certs_dir = \(d)/ca-new
        serial = \(d)/serial
        default_md = sha256
        policy = any
        unique_subject = no
        [any]
        commonName = supplied
        [localhost]
        basicConstraints = CA:FALSE
        subjectAltName = DNS:localhost
        [other]
        basicConstraints = CA:FALSE
        subjectAltName = DNS:other.example
        """.write(toFile: d + "/ca.cnf", atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let caExtensions = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]
        for ca in ["ca", "other-ca"] {
            try await run(
                openssl,
                ["req", "-x509"] + key + [
                    "-keyout", "\(d)/\(ca).key", "-out", "\(d)/\(ca).pem", "-days", "30", "-subj", "/CN=Broker \(ca)",
                ]
                    + caExtensions)
        }
        let signed: [(Case, ca: String, section: String, start: String?, end: String?)] = [
            (.valid, "ca", "localhost", nil, nil),
            (.expired, "ca", "localhost", "20200101000000Z", "20210101000000Z"),
            (.notYetValid, "ca", "localhost", "20990101000000Z", "21000101000000Z"),
            (.wrongHost, "ca", "other", nil, nil),
            (.unknownCA, "other-ca", "localhost", nil, nil),
            (.tls10Only, "ca", "localhost", nil, nil),
        ]
        for (which, ca, section, start, end) in signed {
            let name = which.rawValue
            try await run(openssl, ["req"] + key + ["-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).csr", "-subj", "/CN=\(section)"])
            var arguments = [
                "ca", "-batch", "-notext", "-config", "\(d)/ca.cnf", "-cert", "\(d)/\(ca).pem", "-keyfile", "\(d)/\(ca).key",
                "-in", "\(d)/\(name).csr", "-out", "\(d)/\(name).pem", "-extfile", "\(d)/ca.cnf", "-extensions", section,
            ]
            if let start, let end { arguments += ["-startdate", start, "-enddate", end] } else { arguments += ["-days", "30"] }
            try await run(openssl, arguments)
        }
        try await run(
            openssl,
            ["req", "-x509"] + key + [
                "-keyout", "\(d)/selfSigned.key", "-out", "\(d)/selfSigned.pem", "-days", "30", "-subj", "/CN=localhost",
                "-addext", "subjectAltName=DNS:localhost",
            ])
    }

    private func run(_ executable: String, _ arguments: [String]) async throws {
        try await TestTools.run(executable, arguments)
    }

    // MARK: nginx

    /// Starts nginx; true once it listens on every port, false when a port is another process's.
    private func launch(_ nginx: String) async throws -> Bool {
        let d = directory
        var blocks = ""
        for which in Case.allCases {
            let name = which.rawValue
            // TLS 1.0 needs security level 0 with OpenSSL 3; the other blocks keep nginx's defaults (TLS 1.2 and 1.3).
            let protocols =
                which == .tls10Only ? "ssl_protocols TLSv1; ssl_ciphers DEFAULT@SECLEVEL=0;" : "ssl_protocols TLSv1.2 TLSv1.3;"
            blocks += """
                server {
                    listen 127.0.0.1:\(ports[which] ?? 0) ssl;
                    server_name localhost;
                    ssl_certificate \(d)/\(name).pem;
                    ssl_certificate_key \(d)/\(name).key;
                    \(protocols)
                    location / { return 200 "hello from \(name)\\n"; }
                }

                """
        }
        try """
        daemon off;
        master_process on;
        worker_processes 1;
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
        \(blocks)
        }
        """.write(toFile: d + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            executable: nginx, arguments: ["-p", d, "-c", d + "/nginx.conf", "-e", d + "/error.log"],
            environment: ProcessInfo.processInfo.environment, stdout: .discard, stderr: .capture)
        self.process = process
        let ports = Array(self.ports.values)
        for _ in 0..<400 {
            if await offPool({ ports.allSatisfy(Self.accepts) }) && process.isRunning {
                return Self.listens(on: ports, pid: process.pid)
            }
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: d + "/error.log", encoding: .utf8)) ?? ""
                if log.contains("Address already in use") { return false }
                throw ChildProcessError("nginx exited at start-up: \(process.errorText) \(log)")
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
