import BrokerCore
import BrokerCrypto
import BrokerRedis
import Foundation
import Testing

@testable import BrokerApp

/// Every secret variable may be given as a file (`X_FILE=/path`), the way Kubernetes and Docker mount secrets: the file's
/// content, trailing line break removed, is the value; both ways at once, or a file that cannot be read, stop start-up
/// with an error naming the variable and the path and never the content.
@Suite struct SecretFileTests {
    /// A fresh directory for one test's files, removed when the test ends.
    final class Directory {
        let path: String
        init() throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("secret-files-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        /// Writes `content` to the file `name` and returns its path.
        func file(_ name: String, _ content: String) throws -> String {
            let file = path + "/" + name
            try Data(content.utf8).write(to: URL(fileURLWithPath: file))
            return file
        }
    }

    @Test func eachOfTheBrokersSecretsIsReadFromItsFileWithoutTheTrailingLineBreak() throws {
        let dir = try Directory()
        let key = Base64.encode([UInt8](repeating: 7, count: 32))
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_API_KEY_FILE": try dir.file("api-key", "0123456789abcdef-api\n"),
            "BROKER_API_KEYS_FILE": try dir.file("api-keys", "reports:0123456789abcdef0123456789abcdef\r\n"),
            "BROKER_SECRET_FILE": try dir.file("secret", String(repeating: "s", count: 40) + "\n\n"),
            "BROKER_ENCRYPTION_KEY_FILE": try dir.file("encryption-key", "k7:\(key)\n"),
            "BROKER_WEBHOOK_URL": "https://hooks.example.com/broker",
            "BROKER_WEBHOOK_SECRET_FILE": try dir.file("webhook", String(repeating: "w", count: 32)),
            "BROKER_STORE_FILE": try dir.file("store", "redis://:hunter2hunter2@redis.internal:6379/2\n"),
        ])
        #expect(c.apiKey?.value == "0123456789abcdef-api")
        #expect(c.apiKeys.map(\.name) == ["reports"])
        #expect(c.apiKeys.first?.key.value == "0123456789abcdef0123456789abcdef")
        #expect(c.secret?.value == String(repeating: "s", count: 40))
        #expect(c.encryptionKeyring?.ids == ["k7"])
        #expect(c.webhooks?.secret.value == String(repeating: "w", count: 32))
        #expect(c.redisStore == (try RedisLocation(parsing: "redis://:hunter2hunter2@redis.internal:6379/2")))
    }

    @Test func aPresetsClientSecretAndAProvidersFileReferenceAreReadFromFiles() throws {
        let dir = try Directory()
        let providers = try dir.file(
            "providers.json",
            #"""
            {"providers": {"acme": {"kind": "oauth2", "authorize_url": "https://acme.example.com/authorize", "token_url": "https://acme.example.com/token",
              "client_id": "acme-id", "client_secret": "${ACME_SECRET}", "user_url": "https://acme.example.com/me", "user_id_field": "id"}}}
            """#)
        let c = try BrokerConfiguration.from(environment: [
            "GITHUB_CLIENT_ID": "Iv1.github",
            "GITHUB_CLIENT_SECRET_FILE": try dir.file("github", "github-secret-value\n"),
            "BROKER_PROVIDERS_FILE": providers,
            "ACME_SECRET_FILE": try dir.file("acme", "acme-secret-value\n"),
        ])
        #expect(c.providers.first { $0.name == "github" }?.clientSecret?.value == "github-secret-value")
        #expect(c.providers.first { $0.name == "acme" }?.clientSecret?.value == "acme-secret-value")
    }

    @Test(arguments: EnvironmentReader.secretFileVariables.map(\.variable) + ["GITHUB_CLIENT_SECRET"])
    func bothTheVariableAndItsFileIsAnErrorNamingBoth(variable: String) throws {
        let dir = try Directory()
        let error = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: [
                variable: "value-given-in-the-environment", variable + "_FILE": try dir.file("secret", "value-in-the-file"),
            ])
        }
        #expect(error?.variable == variable + "_FILE")
        #expect(error?.message.contains(variable + " ") == true)
        #expect(error?.description.contains("value-") == false)
    }

    @Test func aFileThatCannotBeUsedIsNamedWithItsPathAndNeverItsContent() throws {
        let dir = try Directory()
        let secret = String(repeating: "x", count: 40)
        let missing = dir.path + "/missing"
        let empty = try dir.file("empty", "\n")
        let binary = dir.path + "/binary"
        try Data([0xff, 0xfe] + Array(secret.utf8)).write(to: URL(fileURLWithPath: binary))
        let large = try dir.file("large", secret + String(repeating: "y", count: 70_000))
        let cases: [(String, String)] = [
            (missing, "No such file or directory"), (dir.path, "Is a directory"), (empty, "the file is empty"),
            (binary, "not UTF-8 text"), (large, "larger than 64 KiB; a secret file holds one value"),
        ]
        for (path, reason) in cases {
            let error = #expect(throws: ConfigurationError.self) {
                try BrokerConfiguration.from(environment: ["BROKER_SECRET_FILE": path])
            }
            #expect(error?.variable == "BROKER_SECRET_FILE")
            #expect(error?.message == "cannot read \(path): \(reason)")
            #expect(error?.description.contains(secret) == false)
        }
    }

    @Test func aValueFromAFileIsCheckedLikeTheVariableAndAnEmptyFileVariableIsUnset() throws {
        let dir = try Directory()
        let error = #expect(throws: ConfigurationError.self) {
            try BrokerConfiguration.from(environment: ["BROKER_API_KEY_FILE": try dir.file("short", "short-key\n")])
        }
        #expect(error?.variable == "BROKER_API_KEY")
        #expect(error?.description.contains("short-key") == false)
        #expect(try BrokerConfiguration.from(environment: ["BROKER_SECRET_FILE": "", "BROKER_SECRET": ""]).secret == nil)
        // An empty variable beside its file is unset, as a copied .env.example leaves it.
        let c = try BrokerConfiguration.from(environment: [
            "BROKER_SECRET": "", "BROKER_SECRET_FILE": try dir.file("secret", String(repeating: "s", count: 32)),
        ])
        #expect(c.secret?.value == String(repeating: "s", count: 32))
    }

    @Test func theCommandsThatReadTheEnvironmentThemselvesGetTheFilesContent() throws {
        let dir = try Directory()
        let environment = try BrokerConfiguration.environmentReadingSecretFiles([
            "BROKER_API_KEY_FILE": try dir.file("api-key", "0123456789abcdef-api\n"), "BROKER_URL": "http://127.0.0.1:1",
        ])
        #expect(try AccountsClient.settings(environment).apiKey.value == "0123456789abcdef-api")
        // Read once, the file variable is gone: reading again changes nothing and finds no conflict.
        #expect(try BrokerConfiguration.environmentReadingSecretFiles(environment) == environment)
    }
}
