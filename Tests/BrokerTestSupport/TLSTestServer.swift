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
    // @unchecked: `nginx` is set in `start` and stopped by `stop`, which the one owning test calls in turn.

    /// What a server block presents.
    public enum Case: String, CaseIterable, Sendable {
        case valid, expired, notYetValid, wrongHost, selfSigned, unknownCA, tls10Only
    }

    /// The PEM file of the test CA that signs every case's certificate but `selfSigned` and `unknownCA`.
    public let caFile: String
    private let directory: String
    private var nginx: NginxServer?

    private init(directory: String) {
        self.directory = directory
        caFile = directory + "/ca.pem"
    }

    /// The port of each case: nginx's ports, in ``Case/allCases`` order.
    private var ports: [Case: Int] {
        Dictionary(uniqueKeysWithValues: zip(Case.allCases, nginx?.ports ?? []))
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
        let openssl = try TestTools.path("openssl", package: "openssl")
        let directory = NSTemporaryDirectory() + "/broker-tls-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory + "/ca-new", withIntermediateDirectories: true)
        let server = TLSTestServer(directory: directory)
        do {
            try await server.makeCertificates(openssl)
            server.nginx = try await NginxServer.start(in: directory, portCount: Case.allCases.count) { ports in
                zip(Case.allCases, ports).map { server.block($0, port: $1) }.joined(separator: "\n")
            }
            return server
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Stops nginx and removes the directory.
    public func stop() async {
        await nginx?.stop()
        try? FileManager.default.removeItem(atPath: directory)
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

    /// The server block presenting `which` on `port`.
    private func block(_ which: Case, port: Int) -> String {
        let name = which.rawValue
        // TLS 1.0 needs security level 0 with OpenSSL 3; the other blocks keep nginx's defaults (TLS 1.2 and 1.3).
        let protocols = which == .tls10Only ? "ssl_protocols TLSv1; ssl_ciphers DEFAULT@SECLEVEL=0;" : "ssl_protocols TLSv1.2 TLSv1.3;"
        return """
            server {
                listen 127.0.0.1:\(port) ssl;
                server_name localhost;
                ssl_certificate \(directory)/\(name).pem;
                ssl_certificate_key \(directory)/\(name).key;
                \(protocols)
                location / { return 200 "hello from \(name)\\n"; }
            }
            """
    }
}
