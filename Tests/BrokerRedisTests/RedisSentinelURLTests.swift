import BrokerCore
import BrokerRedis
import Testing

/// `redis-sentinel://` URLs: the accepted forms, each refusal, and a password that never shows.
struct RedisSentinelURLTests {
    @Test func parsesEveryAcceptedForm() throws {
        let one = try RedisSentinelURL(parsing: "redis-sentinel://s1/mymaster")
        #expect(one == RedisSentinelURL(sentinels: [.init(host: "s1", port: 26379)], primaryName: "mymaster"))
        let many = try RedisSentinelURL(parsing: "REDIS-SENTINEL://:pw@s1:26380,10.0.0.2,[::1]:5000/cache.primary-1/3")
        #expect(many.sentinels == [.init(host: "s1", port: 26380), .init(host: "10.0.0.2", port: 26379), .init(host: "::1", port: 5000)])
        #expect(many.primaryName == "cache.primary-1")
        #expect(many.password == Secret("pw"))
        #expect(many.database == 3)
        #expect(many.primary(host: "10.1.1.1", port: 6380) == RedisURL(host: "10.1.1.1", port: 6380, password: Secret("pw"), database: 3))
        #expect(try RedisLocation(parsing: "redis-sentinel://s1/m") == .sentinel(try RedisSentinelURL(parsing: "redis-sentinel://s1/m")))
        #expect(try RedisLocation(parsing: "redis://h:1") == .server(RedisURL(host: "h", port: 1)))
    }

    @Test(arguments: [
        ("redis-sentinel://s1", "primary-name"),
        ("redis-sentinel://s1/", "primary's name"),
        ("redis-sentinel://s1/my master", "primary's name"),
        ("redis-sentinel:///mymaster", "no sentinel"),
        ("redis-sentinel://:26379/mymaster", "host is empty"),
        ("redis-sentinel://s1,,s2/mymaster", "stray comma"),
        ("redis-sentinel://s1:0/mymaster", "port"),
        ("redis-sentinel://s1/mymaster/x", "database"),
        ("redis-sentinel://s1/mymaster/1/2", "primary-name"),
        ("redis-sentinel://s1/mymaster?x=1", "query"),
        ("redis-sentinel://u:@s1/mymaster", "password is empty"),
    ])
    func refusesWithAReason(text: String, fragment: String) {
        let error = #expect(throws: RedisURLError.self) { try RedisSentinelURL(parsing: text) }
        #expect(error?.reason.contains(fragment) == true, "\(String(describing: error))")
    }

    @Test func descriptionRedactsThePassword() throws {
        let url = try RedisSentinelURL(parsing: "redis-sentinel://broker:SENTINELpw@s1:1,s2:2/mymaster/2")
        #expect(url.description == "redis-sentinel://broker:<redacted>@s1:1,s2:2/mymaster/2")
        #expect(!"\(RedisLocation.sentinel(url))".contains("SENTINELpw"))
    }

    @Test func tlsSettingsReachOnlyARedissServer() throws {
        let tls = RedisTLS(caFile: "/etc/redis-ca.pem")
        let secure = try RedisLocation(parsing: "rediss://h:6380")
        #expect(secure.usesTLS)
        #expect(secure.configuringTLS(tls) == .server(RedisURL(host: "h", port: 6380, tls: tls)))
        let plain = try RedisLocation(parsing: "redis://h:6379")
        #expect(!plain.usesTLS && plain.configuringTLS(tls) == plain)
        let sentinel = try RedisLocation(parsing: "redis-sentinel://s1:1/mymaster")
        #expect(!sentinel.usesTLS && sentinel.configuringTLS(tls) == sentinel)
    }

    @Test func sentinelsOverTLSAreRefusedWithAPointerToTheSidecar() {
        let error = #expect(throws: RedisURLError.self) { try RedisLocation(parsing: "rediss-sentinel://h:26380/mymaster") }
        #expect(error?.reason.contains("TLS proxy") == true)
    }
}
