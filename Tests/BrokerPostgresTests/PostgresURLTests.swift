import BrokerCore
import Testing

@testable import BrokerPostgres

/// `postgres://` and `postgresql://` URLs as libpq reads them.
struct PostgresURLTests {
    @Test("a full URL: user, password with escapes, several hosts, database and options")
    func full() throws {
        let configuration = try PostgresConfiguration.parse(
            "postgresql://broker:p%40ss%2Fw:rd@db1.internal:5433,10.0.0.2,[::1]:6543/tokens?target_session_attrs=read-write&connect_timeout=7&application_name=token-broker&sslmode=disable"
        )
        #expect(configuration.user == "broker")
        #expect(configuration.password == Secret("p@ss/w:rd"))
        #expect(
            configuration.endpoints == [
                .init(host: "db1.internal", port: 5433), .init(host: "10.0.0.2", port: 5432), .init(host: "::1", port: 6543),
            ])
        #expect(configuration.database == "tokens")
        #expect(configuration.targetSessionAttributes == .readWrite)
        #expect(configuration.connectTimeout == 7)
        #expect(configuration.applicationName == "token-broker")
        #expect(configuration.sslMode == .disable)
        #expect(!"\(configuration)".contains("p@ss"))
    }

    @Test("defaults: port 5432, the database named after the user, any server")
    func defaults() throws {
        let configuration = try PostgresConfiguration.parse("postgres://broker@db")
        #expect(configuration.endpoints == [.init(host: "db", port: 5432)])
        #expect(configuration.database == "broker")
        #expect(configuration.password == nil)
        #expect(configuration.targetSessionAttributes == .any)
    }

    @Test(
        "malformed URLs are refused without quoting the password",
        arguments: [
            "mysql://u:hunter2@h/db", "postgres://u:hunter2@h:0/db", "postgres://u:hunter2@h:99999/db", "postgres://u:hunter2@h:abc/db",
            "postgres://u:hunter2@/db?x", "postgres://u:hunter2@h/db?target_session_attrs=primary", "postgres://u:hunter2@h/db?nosuch=1",
            "postgres://u:hunter2@h/db?sslmode=weird", "postgres://:hunter2@h/db", "postgres://u:hunter2@h,,h2/db",
            "postgres://u:hunter2@h/db#x",
            "postgres://u:hunter2%zz@h/db", "postgres://u:hunter2@[::1/db",
        ])
    func refused(url: String) {
        #expect {
            _ = try PostgresConfiguration.parse(url)
        } throws: { error in
            !"\(error)".contains("hunter2")
        }
    }

    @Test("sslmode require, verify-ca and verify-full parse with sslrootcert, sslcert and sslkey; disable, allow and prefer mean plain TCP")
    func tlsModes() throws {
        for (mode, expected) in [
            ("require", PostgresConfiguration.SSLMode.require), ("verify-ca", .verifyCA), ("verify-full", .verifyFull),
            ("disable", .disable), ("allow", .disable), ("prefer", .disable),
        ] {
            let configuration = try PostgresConfiguration.parse(
                "postgres://u:pw@h/db?sslmode=\(mode)&sslrootcert=/etc/ca%20dir/ca.pem&sslcert=/c.pem&sslkey=/k.pem")
            #expect(configuration.sslMode == expected)
            #expect(configuration.sslMode.usesTLS == (expected != .disable))
            #expect(configuration.sslRootCert == "/etc/ca dir/ca.pem")
            #expect(configuration.sslCert == "/c.pem" && configuration.sslKey == "/k.pem")
        }
        #expect(throws: PostgresError.self) { try PostgresConfiguration.parse("postgres://u:pw@h/db?sslrootcert=") }
    }
}
