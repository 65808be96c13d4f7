import BrokerCore
import BrokerPostgres
import Foundation
import Glibc

/// A real PostgreSQL server (Debian's `postgresql` package) started for one test on a free loopback port, in a
/// temporary directory that holds its data, its Unix socket and its log, and stopped after the test.
///
/// `initdb` makes a cluster whose superuser `postgres` has a random password stored as SCRAM-SHA-256, and
/// `pg_hba.conf` requires scram-sha-256 on 127.0.0.1 (``md5User`` logs in with md5, ``cleartextUser`` with the
/// cleartext `password` method, for the tests that check those are refused). PostgreSQL refuses to run as root:
/// under root every binary runs as the `postgres` account through `setpriv`, which replaces itself with the
/// binary, so the child's pid is the server's. When the binaries are missing the tests fail, naming what to
/// install; they never skip.
public final class PostgresServer: @unchecked Sendable {
    // @unchecked: `process` is replaced only by `kill`, `restart` and `stop`, which the one test owning this
    // server calls one after another, never concurrently.

    /// The loopback port the server listens on; kept across a restart.
    public let port: Int
    /// The superuser's password.
    public let superuserPassword: String
    /// The role with an md5-hashed password and an md5 `pg_hba.conf` line.
    public static let md5User = "md5user"
    /// The role with a cleartext `password` line in `pg_hba.conf`.
    public static let cleartextUser = "plainuser"
    /// The password of ``md5User`` and ``cleartextUser``.
    public static let legacyPassword = "legacy-pass"
    private let directory: String
    private let binaries: String
    /// The server's `max_connections`.
    private let maxConnections: Int
    private var process: ChildProcess?
    /// The server's certificate and key when it accepts TLS (`ssl=on`), copied into its directory.
    private let certificate: TestCertificateAuthority.Issued?

    private init(
        port: Int, directory: String, binaries: String, maxConnections: Int = 60, certificate: TestCertificateAuthority.Issued? = nil
    ) {
        self.maxConnections = maxConnections
        self.certificate = certificate
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.superuserPassword = "pw-" + UUID().uuidString
    }

    /// ``start()`` for the current ``TestScope``, which stops the server when the test ends.
    public static func scoped(certificate: TestCertificateAuthority.Issued? = nil) async throws -> PostgresServer {
        let server = try await start(certificate: certificate)
        TestScope.required("a postgres server")?.onEnd { await server.stop() }
        return server
    }

    /// Makes a cluster and starts it on a free port, retrying with another port if one was taken meanwhile.
    /// With `certificate`, the server also accepts TLS (`ssl=on`) with that certificate and key; plain TCP still works.
    public static func start(maxConnections: Int = 60, certificate: TestCertificateAuthority.Issued? = nil) async throws -> PostgresServer {
        let binaries = try binaryDirectory()
        var lastError: any Error = PostgresTestError("postgres did not start")
        for _ in 0..<3 {
            let directory = NSTemporaryDirectory() + "/broker-pg-test-" + UUID().uuidString
            let server = PostgresServer(
                port: try Loopback.freePort(), directory: directory, binaries: binaries, maxConnections: maxConnections,
                certificate: certificate)
            do {
                try await server.makeCluster()
                try await server.launch()
                try await server.createLegacyRoles()
                return server
            } catch {
                lastError = error
                await server.stop()
            }
        }
        throw lastError
    }

    /// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `postgres`, or an error telling how to get them.
    public static func binaryDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let bin = "\(root)/\(version)/bin"
            if access(bin + "/initdb", X_OK) == 0, access(bin + "/postgres", X_OK) == 0 { return bin }
        }
        throw PostgresTestError(
            """
            PostgreSQL's server binaries are not in /usr/lib/postgresql/<version>/bin. These tests need a real \
            PostgreSQL and never skip: install the Debian package with `apt-get install postgresql`, or run \
            scripts/test, which installs it.
            """)
    }

    /// The configuration of a client of this server as `user` (the superuser by default).
    public func configuration(
        user: String = "postgres", password: String? = nil, poolSize: Int = 4, applicationName: String? = nil, allowMD5: Bool = false
    ) -> PostgresConfiguration {
        PostgresConfiguration(
            endpoints: [.init(host: "127.0.0.1", port: port)], user: user,
            password: Secret(password ?? (user == "postgres" ? superuserPassword : Self.legacyPassword)), database: "postgres",
            applicationName: applicationName, connectTimeout: 30, allowMD5: allowMD5, statementTimeout: 60, poolSize: poolSize)
    }

    /// A client of this server as the superuser.
    public func client(poolSize: Int = 4, applicationName: String? = nil) throws -> PostgresClient {
        try PostgresClient(configuration: configuration(poolSize: poolSize, applicationName: applicationName))
    }

    /// Kills the server and every backend with SIGKILL, as a crash of the machine's database would.
    public func kill() async {
        guard let process else { return }
        self.process = nil
        let children = Self.children(of: process.pid)
        process.signal(SIGKILL)
        for child in children { Glibc.kill(child, SIGKILL) }
        _ = await offPool { process.waitUntilExit() }
        // The backends are not this process's children: wait until they are gone, so a restart finds its
        // shared memory free.
        _ = await eventually { children.allSatisfy { Glibc.kill($0, 0) != 0 } }
    }

    /// Starts the server again on the same port with the same data (it runs crash recovery after ``kill()``).
    public func restart() async throws {
        try await launch()
    }

    /// Stops the server at once (SIGQUIT, an immediate shutdown that frees its shared memory) and removes its directory.
    public func stop() async {
        if let process {
            self.process = nil
            process.signal(SIGQUIT)
            if await offPool({ process.waitForExit(timeout: 60) }) == nil {
                process.signal(SIGKILL)
                _ = await offPool { process.waitUntilExit() }
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private var dataDirectory: String { directory + "/data" }

    private func makeCluster() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try handToServerAccount(directory)
        let passwordFile = directory + "/superuser-password"
        try superuserPassword.write(toFile: passwordFile, atomically: false, encoding: .utf8)
        try handToServerAccount(passwordFile)
        let initdb = try spawn(
            binaries + "/initdb",
            [
                "-D", dataDirectory, "-U", "postgres", "--pwfile=\(passwordFile)", "--auth-local=trust",
                "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync",
            ])
        let status = await offPool { initdb.waitUntilExit() }
        initdb.drainOutput()
        guard status == 0 else { throw PostgresTestError("initdb failed (status \(status)): \(initdb.errorText)") }
        try? FileManager.default.removeItem(atPath: passwordFile)
        // First match wins: the legacy roles' methods, then SCRAM for everyone else on 127.0.0.1.
        let hba = """
            local all all trust
            host all \(Self.md5User) 127.0.0.1/32 md5
            host all \(Self.cleartextUser) 127.0.0.1/32 password
            host all all 127.0.0.1/32 scram-sha-256

            """
        try hba.write(toFile: dataDirectory + "/pg_hba.conf", atomically: false, encoding: .utf8)
        if let certificate {
            // The server refuses a key others may read: its own copy, owned by the account it runs as, mode 0600.
            for (source, name) in [(certificate.certificateFile, "server.crt"), (certificate.keyFile, "server.key")] {
                let target = directory + "/" + name
                try FileManager.default.copyItem(atPath: source, toPath: target)
                guard chmod(target, 0o600) == 0 else { throw PostgresTestError("chmod \(target) failed: errno \(errno)") }
                try handToServerAccount(target)
            }
        }
    }

    /// The `-c` settings that turn TLS on, when the server has a certificate.
    private var tlsSettings: [String] {
        guard certificate != nil else { return [] }
        return ["-c", "ssl=on", "-c", "ssl_cert_file=\(directory)/server.crt", "-c", "ssl_key_file=\(directory)/server.key"]
    }

    private func launch() async throws {
        let pidFile = dataDirectory + "/postmaster.pid"
        let process = try spawn(
            binaries + "/postgres",
            [
                "-D", dataDirectory, "-p", String(port), "-k", directory, "-c", "listen_addresses=127.0.0.1",
                "-c", "password_encryption=scram-sha-256", "-c", "fsync=off", "-c", "max_connections=\(maxConnections)",
                "-c", "shared_buffers=16MB",
            ] + tlsSettings)
        self.process = process
        let started = Date()
        // A minute: a loaded machine starts it late; the bound only ends a start that failed.
        while Date().timeIntervalSince(started) < 60 {
            // postmaster.pid's eighth line says `ready` once connections are accepted (a port taken meanwhile
            // makes the server exit instead, and its pid file would name another process).
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8), text.hasPrefix("\(process.pid)\n") {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                if lines.count > 7, lines[7].hasPrefix("ready"), process.isRunning { return }
            }
            guard process.isRunning else {
                process.drainOutput()
                throw PostgresTestError("postgres exited at start-up on port \(port): \(process.errorText.suffix(2000))")
            }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
        throw PostgresTestError("postgres on port \(port) was not ready within a minute")
    }

    /// The roles that log in with the legacy methods, their passwords hashed as those methods need.
    private func createLegacyRoles() async throws {
        let client = try client(poolSize: 1)
        defer { Task { await client.close() } }
        try await client.withConnection { (connection) async throws(PostgresError) in
            _ = try await connection.query("SET password_encryption = 'md5'")
            _ = try await connection.query("CREATE ROLE \(Self.md5User) LOGIN PASSWORD '\(Self.legacyPassword)'")
            _ = try await connection.query("SET password_encryption = 'scram-sha-256'")
            _ = try await connection.query("CREATE ROLE \(Self.cleartextUser) LOGIN PASSWORD '\(Self.legacyPassword)'")
        }
    }

    /// Spawns a PostgreSQL binary, as the `postgres` account when this process is root.
    private func spawn(_ executable: String, _ arguments: [String]) throws -> ChildProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        if getuid() == 0 {
            return try ChildProcess(
                executable: "/usr/bin/setpriv",
                arguments: ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", executable] + arguments,
                environment: environment, stdout: .discard, stderr: .capture)
        }
        return try ChildProcess(executable: executable, arguments: arguments, environment: environment, stdout: .discard, stderr: .capture)
    }

    /// Gives `path` to the `postgres` account when this process is root (the server refuses a data directory it does not own).
    private func handToServerAccount(_ path: String) throws {
        guard getuid() == 0 else { return }
        guard let account = getpwnam("postgres") else {
            throw PostgresTestError(
                "running as root and there is no postgres account to run the server as (apt-get install postgresql makes it)")
        }
        guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
            throw PostgresTestError("chown \(path) to postgres failed: errno \(errno)")
        }
    }

    /// The pids whose parent is `pid` (the server's backends), from /proc.
    private static func children(of pid: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let child = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // Fields after the command name: state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
        }
    }
}

/// A failure of the PostgreSQL test harness itself, such as missing binaries.
public struct PostgresTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
