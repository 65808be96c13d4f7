import BrokerCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension EnvironmentReader {
    /// The secret variables that may instead be given as a file (`BROKER_SECRET_FILE=/run/secrets/broker-secret`), each
    /// with its file variable. `BROKER_STORE` is here because a Redis URL carries the password.
    static let secretFileVariables: [(variable: String, file: String)] = [
        ("BROKER_API_KEY", "BROKER_API_KEY_FILE"),
        ("BROKER_API_KEYS", "BROKER_API_KEYS_FILE"),
        ("BROKER_SECRET", "BROKER_SECRET_FILE"),
        ("BROKER_ENCRYPTION_KEY", "BROKER_ENCRYPTION_KEY_FILE"),
        ("BROKER_WEBHOOK_SECRET", "BROKER_WEBHOOK_SECRET_FILE"),
        ("BROKER_STORE", "BROKER_STORE_FILE"),
    ]

    /// The largest secret file read: a secret is a line, and a path to a device must not be read without end.
    static let maximumSecretFileBytes = 64 << 10

    /// `environment` with every secret given as a file read into its variable: the broker's own
    /// (``secretFileVariables``), each preset's client secret or API key (`GITHUB_CLIENT_SECRET_FILE`), and
    /// `extraVariables` (those a providers file references as `${NAME}`), each `NAME_FILE`.
    ///
    /// `X_FILE=/path` sets `X` to the file's content without its trailing line breaks and removes `X_FILE`, so
    /// reading an environment twice changes nothing. `X_FILE` set with `X` not empty, a file that cannot be read,
    /// that is empty, too large or not UTF-8 stop start-up with an error naming the variable and the path, never
    /// the content. An empty `X_FILE` is unset, like every other variable.
    static func readingSecretFiles(
        _ environment: [String: String], extraVariables: [String] = []
    ) throws(ConfigurationError) -> [String: String] {
        var pairs = secretFileVariables
        for variable in ProviderPresets.secretVariables + extraVariables where !pairs.contains(where: { $0.variable == variable }) {
            pairs.append((variable, variable + "_FILE"))
        }
        var result = environment
        for (variable, fileVariable) in pairs {
            guard let path = result[fileVariable] else { continue }
            result[fileVariable] = nil
            guard !path.isEmpty else { continue }
            if let value = result[variable], !value.isEmpty {
                throw ConfigurationError(
                    variable: fileVariable, message: "is set, and so is \(variable): give \(variable) one way, not both")
            }
            result[variable] = try readSecretFile(path, variable: fileVariable)
        }
        return result
    }

    /// The text of the secret file at `path`, trailing `\n` and `\r` removed; errors name `variable` and the path.
    static func readSecretFile(_ path: String, variable: String) throws(ConfigurationError) -> String {
        func failure(_ reason: String) -> ConfigurationError {
            ConfigurationError(variable: variable, message: "cannot read \(path): \(reason)")
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
            guard bytes.count <= maximumSecretFileBytes else {
                throw failure("larger than \(maximumSecretFileBytes / 1024) KiB; a secret file holds one value")
            }
        }
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw failure("the file is empty") }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw failure("not UTF-8 text") }
        return text
    }
}
