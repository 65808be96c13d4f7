import BrokerCore
import BrokerRedis
import Testing

/// `redis://` URLs: the accepted forms, each refusal, and a password that never shows.
struct RedisURLTests {
    @Test func parsesEveryAcceptedForm() throws {
        #expect(try RedisURL(parsing: "redis://localhost") == RedisURL(host: "localhost", port: 6379))
        #expect(try RedisURL(parsing: "redis://10.0.0.5:6380") == RedisURL(host: "10.0.0.5", port: 6380))
        #expect(try RedisURL(parsing: "redis://redis.internal:6379/2") == RedisURL(host: "redis.internal", database: 2))
        #expect(try RedisURL(parsing: "redis://h:6379/") == RedisURL(host: "h"))
        #expect(try RedisURL(parsing: "REDIS://:pw@h:6379/2") == RedisURL(host: "h", password: Secret("pw"), database: 2))
        #expect(
            try RedisURL(parsing: "redis://broker:s3cret@[::1]:7000/15")
                == RedisURL(host: "::1", port: 7000, username: "broker", password: Secret("s3cret"), database: 15))
        #expect(try RedisURL(parsing: "redis://[fe80::1]") == RedisURL(host: "fe80::1"))
    }

    @Test func redissIsTheSameURLWithTLSOn() throws {
        let url = try RedisURL(parsing: "rediss://broker:s3cret@redis.internal:6380/2")
        #expect(
            url
                == RedisURL(
                    host: "redis.internal", port: 6380, username: "broker", password: Secret("s3cret"), database: 2, tls: RedisTLS()))
        #expect(url.description == "rediss://broker:<redacted>@redis.internal:6380/2")
        #expect(try RedisURL(parsing: "REDISS://h").tls != nil)
        #expect(try RedisURL(parsing: "redis://h").tls == nil)
    }

    @Test func passwordMayHoldReservedCharactersRawOrEscaped() throws {
        #expect(try RedisURL(parsing: "redis://:a/b?c#d@h:1").password == Secret("a/b?c#d"))
        #expect(try RedisURL(parsing: "redis://u:p@ss@h:1").password == Secret("p@ss"))
        #expect(
            try RedisURL(parsing: "redis://u%40x:p%25%3A@h:1") == RedisURL(host: "h", port: 1, username: "u@x", password: Secret("p%:")))
    }

    @Test(arguments: [
        ("localhost:6379", "redis://"),
        ("http://h:6379", "scheme"),
        ("rediss-sentinel://h:26379/m", "sentinels over TLS"),
        ("redis://", "host is empty"),
        ("redis://:6379", "host is empty"),
        ("redis://h:0", "port"),
        ("redis://h:65536", "port"),
        ("redis://h:63x9", "port"),
        ("redis://h:", "port"),
        ("redis://h:6379/x", "database"),
        ("redis://h:6379/-1", "database"),
        ("redis://h:6379/99999999", "database"),
        ("redis://h:6379/0?timeout=1", "query"),
        ("redis://ho st:6379", "host"),
        ("redis://[::1:6379", "closing ]"),
        ("redis://[::1]x", "after the IPv6"),
        ("redis://[zz]:1", "IPv6"),
        ("redis://justuser@h", "user:password"),
        ("redis://u:@h", "password is empty"),
    ])
    func refusesWithAReason(text: String, fragment: String) {
        let error = #expect(throws: RedisURLError.self) { try RedisURL(parsing: text) }
        #expect(error?.reason.contains(fragment) == true, "\(String(describing: error))")
        #expect(error?.description.contains("redis[s]://[user:password@]host:port[/db] or redis-sentinel://") == true)
    }

    @Test func refusalsNeverRepeatThePassword() {
        for text in [
            "redis://:SENTINELpw%zz@h:1", "redis://u:SENTINELpw@h:99999", "redis://u:SENTINELpw@h:1/db", "redis://u:SENTINELpw@:1",
        ] {
            let error = #expect(throws: RedisURLError.self) { try RedisURL(parsing: text) }
            #expect(error.map { !String(describing: $0).contains("SENTINEL") } == true, "\(text)")
        }
    }

    @Test func descriptionRedactsThePassword() throws {
        let url = try RedisURL(parsing: "redis://broker:SENTINELpw@cache:6379/3")
        #expect(url.description == "redis://broker:<redacted>@cache:6379/3")
        #expect(!"\(url)".contains("SENTINEL"))
        #expect(try RedisURL(parsing: "redis://:pw@[::1]:6379").description == "redis://:<redacted>@[::1]:6379")
        #expect(try RedisURL(parsing: "redis://cache").description == "redis://cache:6379")
    }
}
