import Foundation
import Glibc

/// Finding and running the system tools tests drive (`openssl`, `nginx`); a missing one fails the test naming its package.
public enum TestTools {
    /// The path of `name` on PATH or in /usr/sbin, or an error naming the Debian package to install.
    public static func path(_ name: String, package: String) throws -> String {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
            return "\(directory)/\(name)"
        }
        throw ChildProcessError(
            "\(name) is not installed. The TLS tests need it and never skip: `apt-get install \(package)`, or run scripts/test, which installs it."
        )
    }

    /// Runs `executable` with `arguments` to its end; throws with what it wrote to stderr when it fails.
    public static func run(_ executable: String, _ arguments: [String]) async throws {
        let process = try ChildProcess(
            executable: executable, arguments: arguments, environment: ProcessInfo.processInfo.environment, stdout: .discard,
            stderr: .capture)
        let status = await offPool { process.waitUntilExit() }
        process.drainOutput()
        guard status == 0 else {
            let name = (executable as NSString).lastPathComponent
            throw ChildProcessError("\(name) \(arguments.prefix(2).joined(separator: " ")) failed (\(status)): \(process.errorText)")
        }
    }
}

/// A test certificate authority made by the `openssl` CLI in a directory of its own, issuing leaf certificates.
///
/// Keys are P-256 and unencrypted, certificates valid for 30 days. A second,
/// unrelated CA (``otherCAFile``) signs certificates no client trusts.
public struct TestCertificateAuthority: Sendable {
    /// The directory holding every key and certificate.
    public let directory: String
    /// The PEM certificate of the CA that clients are given.
    public var caFile: String { directory + "/ca.pem" }
    /// The PEM certificate of a CA no client is given.
    public var otherCAFile: String { directory + "/other-ca.pem" }

    /// A certificate and its key, both PEM files.
    public struct Issued: Sendable {
        public let certificateFile: String
        public let keyFile: String
    }

    private static let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    /// Makes the two CAs in `directory` (created if missing).
    public static func make(in directory: String) async throws -> TestCertificateAuthority {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let openssl = try TestTools.path("openssl", package: "openssl")
        for ca in ["ca", "other-ca"] {
            try await TestTools.run(
                openssl,
                ["req", "-x509"] + key + [
                    "-keyout", "\(directory)/\(ca).key", "-out", "\(directory)/\(ca).pem", "-days", "30", "-subj", "/CN=Broker test \(ca)",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
        }
        return TestCertificateAuthority(directory: directory)
    }

    /// Issues `name`'s certificate for `subjectAltName` (such as `DNS:localhost`), signed by this CA or, with
    /// `byOtherCA`, by the untrusted one; `client` marks it for client authentication, else for a server.
    public func issue(_ name: String, subjectAltName: String, client: Bool = false, byOtherCA: Bool = false) async throws -> Issued {
        let openssl = try TestTools.path("openssl", package: "openssl")
        let d = directory
        let ca = byOtherCA ? "other-ca" : "ca"
        try """
        basicConstraints = CA:FALSE
        subjectAltName = \(subjectAltName)
        extendedKeyUsage = \(client ? "clientAuth" : "serverAuth")
        """.write(toFile: "\(d)/\(name).ext", atomically: true, encoding: .utf8)
        try await TestTools.run(
            openssl, ["req"] + Self.key + ["-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).csr", "-subj", "/CN=\(name)"])
        try await TestTools.run(
            openssl,
            [
                "x509", "-req", "-in", "\(d)/\(name).csr", "-CA", "\(d)/\(ca).pem", "-CAkey", "\(d)/\(ca).key", "-CAcreateserial",
                "-out", "\(d)/\(name).pem", "-days", "30", "-sha256", "-extfile", "\(d)/\(name).ext",
            ])
        return Issued(certificateFile: "\(d)/\(name).pem", keyFile: "\(d)/\(name).key")
    }
}
