import BrokerCore
import BrokerRedis
import Foundation
import Glibc

/// A real `redis-server` child process on a free loopback port, started for one test and killed after it.
///
/// Started with `--save "" --appendonly no`, so nothing is written to disk but
/// its own temporary directory. When `redis-server` is not on PATH the tests
/// fail, naming what to install; they never skip.
public final class RedisServer: @unchecked Sendable {
    // @unchecked: `process` is replaced only by `kill` and `restart`, which the one test
    // owning this server calls one after another, never concurrently.

    /// The loopback port the server listens on; kept across a restart.
    public let port: Int
    /// The `requirepass` password, if any.
    let password: String?
    private let directory: String
    private var process: ChildProcess?

    private let persistent: Bool
    /// More `redis-server` arguments, such as `--replicaof 127.0.0.1 6379`.
    private let extraArguments: [String]
    /// The server's TLS, when it speaks only TLS (`--port 0 --tls-port`).
    public let tls: TLS?

    /// How a server speaks TLS: its certificate, the CA it checks client certificates against, and whether it
    /// requires one (`tls-auth-clients`).
    public struct TLS: Sendable {
        public var certificate: TestCertificateAuthority.Issued
        public var caFile: String
        public var requireClientCertificate: Bool

        public init(certificate: TestCertificateAuthority.Issued, caFile: String, requireClientCertificate: Bool) {
            self.certificate = certificate
            self.caFile = caFile
            self.requireClientCertificate = requireClientCertificate
        }
    }

    private init(port: Int, password: String?, directory: String, persistent: Bool, extraArguments: [String], tls: TLS?) {
        self.port = port
        self.password = password
        self.directory = directory
        self.persistent = persistent
        self.extraArguments = extraArguments
        self.tls = tls
    }

    /// Runs `body` with a fresh server, then kills it and removes its directory, whether `body` throws or not.
    public static func with<T>(password: String? = nil, _ body: (RedisServer) async throws -> T) async throws -> T {
        let server = try await start(password: password)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// ``start(password:persistent:)`` for the current ``TestScope``, which stops the server when the test ends.
    public static func scoped(password: String? = nil, persistent: Bool = false, tls: TLS? = nil) async throws -> RedisServer {
        let server = try await start(password: password, persistent: persistent, tls: tls)
        TestScope.required("a redis-server")?.onEnd { await server.stop() }
        return server
    }

    /// Starts a server on a free port, retrying with another port if one was taken meanwhile.
    /// With `persistent`, writes go to an append-only file synced on every write, so a
    /// killed and restarted server keeps every acknowledged write (as operators run it).
    /// `arguments` are passed on to `redis-server` (a replica's `--replicaof`, say). With `tls` the port speaks
    /// only TLS and there is no plaintext port.
    public static func start(
        password: String? = nil, persistent: Bool = false, arguments: [String] = [], tls: TLS? = nil
    ) async throws -> RedisServer {
        let executable = try executablePath()
        var lastError: any Error = RedisTestError("redis-server did not start")
        for _ in 0..<5 {
            let directory = NSTemporaryDirectory() + "/broker-redis-test-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let server = RedisServer(
                port: try Loopback.freePort(), password: password, directory: directory, persistent: persistent,
                extraArguments: arguments, tls: tls)
            do {
                try await server.launch(executable)
                return server
            } catch {
                lastError = error
                await server.stop()
            }
        }
        throw lastError
    }

    /// The path of `redis-server` on PATH, or an error telling how to get it.
    public static func executablePath() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/redis-server"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw RedisTestError(
            """
            redis-server is not on PATH. These tests need a real Redis (7.x, GETDEL needs 6.2 or later) \
            and never skip: install the Debian package with `apt-get install redis-server`, \
            or run scripts/test, which installs it.
            """)
    }

    /// A URL for this server with `database` and, if given, credentials.
    public func url(database: Int = 0, username: String? = nil, password: String? = nil) -> RedisURL {
        RedisURL(host: "127.0.0.1", port: port, username: username, password: password.map(Secret.init), database: database)
    }

    /// A `rediss://` URL for this TLS server at `host` (its certificate names `localhost`), with these TLS settings.
    public func tlsURL(host: String = "localhost", settings: RedisTLS, password: String? = nil) -> RedisURL {
        RedisURL(host: host, port: port, password: password.map(Secret.init), tls: settings)
    }

    /// A client for this server with the password it requires, if any. The timeout is generous: a loaded machine
    /// answers late, and a test of the timeout itself stops the server (``pause()``) and sets its own.
    public func client(database: Int = 0, poolSize: Int = 4, timeout: Double = 30) -> RedisClient {
        RedisClient(url: url(database: database, password: password), poolSize: poolSize, timeout: timeout)
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until it is gone.
    public func kill() async {
        guard let process else { return }
        self.process = nil
        process.signal(SIGKILL)
        _ = await offPool { process.waitUntilExit() }
    }

    /// Stops the server with SIGSTOP: connections stay open and commands are sent, but nothing is answered until
    /// ``resume()``, however long that takes (unlike `CLIENT PAUSE`, which ends by the clock).
    public func pause() {
        process?.signal(SIGSTOP)
    }

    /// Lets a paused server go on (SIGCONT); it answers what it was sent meanwhile.
    public func resume() {
        process?.signal(SIGCONT)
    }

    /// How many client connections hold bytes the server has not read yet (the receive queue in `/proc/net/tcp`):
    /// while paused, the commands sent to it, one per connection that sent any.
    public func connectionsWithUnreadBytes() -> Int {
        // Read to the end: /proc files report a size of 0, which Foundation's readers take at its word.
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while case let n = read(fd, &chunk, chunk.count), n > 0 { bytes += chunk[0..<n] }
        let table = String(decoding: bytes, as: UTF8.self)
        let local = String(format: "0100007F:%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            // sl, local_address, rem_address, st (01: established), tx_queue:rx_queue, …
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[1] == local, fields[3] == "01" else { return false }
            let queues = fields[4].split(separator: ":")
            return queues.count == 2 && (Int(queues[1], radix: 16) ?? 0) > 0
        }.count
    }

    /// Starts the server again on the same port, with no data (nothing was persisted).
    public func restart() async throws {
        try await launch(try Self.executablePath())
    }

    /// Kills the server and removes its directory.
    public func stop() async {
        await kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func launch(_ executable: String) async throws {
        var arguments = [
            "--bind", "127.0.0.1", "--save", "",
            "--appendonly", persistent ? "yes" : "no", "--appendfsync", "always",
            "--dir", directory, "--logfile", logPath, "--daemonize", "no",
        ]
        if let tls {
            arguments += [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", tls.certificate.certificateFile,
                "--tls-key-file", tls.certificate.keyFile, "--tls-ca-cert-file", tls.caFile,
                "--tls-auth-clients", tls.requireClientCertificate ? "yes" : "no",
            ]
        } else {
            arguments += ["--port", String(port)]
        }
        if let password { arguments += ["--requirepass", password] }
        arguments += extraArguments
        let log = logPath
        // Counted before the server starts: one that logs it is ready before a count taken after the spawn would be
        // waited for in vain (a loaded machine runs the child first; this ran out the old 5 s bound, then a retry).
        let readyBefore = Self.readyLines(in: log)
        // ChildProcess, not Foundation's Process, whose run() now and then crashes a suite that starts hundreds of children.
        let process = try ChildProcess(
            executable: executable, arguments: arguments, environment: ProcessInfo.processInfo.environment,
            stdout: .discard, stderr: .discard)
        self.process = process
        let port = self.port
        let plaintext = tls == nil
        let started = Date()
        // A minute: a loaded machine starts it late; the bound only ends a start that failed.
        while Date().timeIntervalSince(started) < 60 {
            // Its own log, not a PING alone: another test's server that took the port meanwhile answers PING too, and
            // two tests would then share (and kill) one server. A server that could not bind says so there and exits.
            // A TLS-only server cannot be pinged in plain text: its log and its staying up are the proof.
            if await offPool({ Self.readyLines(in: log) > readyBefore && (!plaintext || Self.answersPing(port: port)) }),
                process.isRunning
            {
                return
            }
            guard process.isRunning else {
                throw RedisTestError(
                    "redis-server exited at start-up on port \(port) (status \(process.terminationStatus.map(String.init) ?? "unknown"))")
            }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
        throw RedisTestError("redis-server on port \(port) did not answer PING within a minute")
    }

    /// The log of this server, rewritten (appended) by each launch.
    private var logPath: String { directory + "/redis.log" }

    /// How many times the log says a launch listens (`Ready to accept connections`, Redis 6 and 7); a restart appends.
    private static func readyLines(in log: String) -> Int {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return 0 }
        return text.components(separatedBy: "Ready to accept connections").count - 1
    }

    /// Whether something on `port` answers an inline `PING` like Redis (`+PONG`, or `-NOAUTH` with a password).
    private static func answersPing(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = Loopback.address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let ping = Array("PING\r\n".utf8)
        guard send(fd, ping, ping.count, Int32(MSG_NOSIGNAL)) == ping.count else { return false }
        var reply = [UInt8](repeating: 0, count: 64)
        let count = recv(fd, &reply, reply.count, 0)
        guard count > 0 else { return false }
        let text = String(decoding: reply[0..<count], as: UTF8.self)
        return text.hasPrefix("+PONG") || text.hasPrefix("-NOAUTH")
    }

}
