// swift-tools-version:6.0
// token-broker: an OAuth token broker with no package dependencies.
// Only what the Swift toolchain ships: Foundation, Dispatch, Glibc and Swift Testing
// (and FoundationNetworking, for the URLSession client the benchmark compares against only).
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "token-broker",
    products: [
        .executable(name: "token-broker", targets: ["token-broker"])
    ],
    targets: [
        // HTTP/1.1 transport: sockets, parser state machine, connections, router.
        .target(name: "BrokerHTTP", dependencies: ["BrokerCrypto", "BrokerTLS", "CEpoll"], swiftSettings: strict),
        // TLS clients on the system's OpenSSL, loaded with dlopen at run time: no headers or -dev package to build.
        .target(name: "BrokerTLS", swiftSettings: strict),
        // <sys/epoll.h> and <sys/eventfd.h> for the HTTP workers' loops: the toolchain's Glibc module leaves them out.
        .target(name: "CEpoll"),
        // Hashes, HMAC, ChaCha20-Poly1305, encodings and randomness, proven by vectors.
        .target(name: "BrokerCrypto", swiftSettings: strict),
        // OAuth flows, providers, accounts, refresh, record codecs and store protocols. Knows no sockets, files or Dispatch.
        .target(name: "BrokerCore", dependencies: ["BrokerCrypto"], swiftSettings: strict),
        // The JSON-file account repository, the flow journal and the data directory they share.
        .target(name: "BrokerFileStore", dependencies: ["BrokerCore", "BrokerCrypto"], swiftSettings: strict),
        // The RESP2 client and the Redis-backed account, flow and lock stores.
        .target(name: "BrokerRedis", dependencies: ["BrokerCore", "BrokerCrypto", "BrokerTLS"], swiftSettings: strict),
        // The PostgreSQL client: protocol 3.0, SCRAM-SHA-256 login, the extended query protocol and a connection pool.
        .target(
            name: "BrokerPostgres", dependencies: ["BrokerCore", "BrokerCrypto", "BrokerTLS", "BrokerHTTP", "CEpoll"], swiftSettings: strict
        ),
        // Fake OAuth 2.0 (RFC 6749 and Weibo, and any catalogue provider's quirks as configuration), OAuth 1.0a (Twitter)
        // and TMDB providers speaking the real wire formats: the tests', the scripts' (fake-provider) and `token-broker demo`'s. Built on the transport only, not on the core it checks.
        .target(name: "BrokerFakeProviders", dependencies: ["BrokerHTTP", "BrokerCrypto"], swiftSettings: strict),
        // Configuration, routes, metrics, logging, the outbound client on BrokerHTTP's: wires transport to core.
        .target(
            name: "BrokerApp",
            dependencies: [
                "BrokerHTTP", "BrokerTLS", "BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerRedis", "BrokerPostgres",
                "BrokerFakeProviders",
            ],
            swiftSettings: strict),
        .executableTarget(name: "token-broker", dependencies: ["BrokerApp"], swiftSettings: strict),
        // The former outbound client on URLSession (FoundationNetworking, libcurl), kept to measure against and for
        // tests; nothing token-broker links depends on it, so the binary loads no libcurl.
        .target(name: "BrokerURLSession", dependencies: ["BrokerApp", "BrokerCore"], swiftSettings: strict),
        // `token-broker serve` with URLSession clients, for scripts/bench-broker's comparison; not shipped in the image.
        .executableTarget(name: "broker-urlsession", dependencies: ["BrokerApp", "BrokerURLSession"], swiftSettings: strict),
        // A fake provider as a process, for scripts and the browser test; not shipped in the image.
        .executableTarget(name: "fake-provider", dependencies: ["BrokerFakeProviders"], swiftSettings: strict),
        // Load and scaling tools for scripts/bench; not shipped in the image.
        .executableTarget(
            name: "broker-bench",
            dependencies: [
                "BrokerApp", "BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerHTTP", "BrokerRedis", "BrokerFakeProviders",
            ],
            swiftSettings: strict),

        // What test targets share: temporary directories, clocks, `eventually`, the raw socket client, scoped
        // start and stop, the conformance suites every store runs, and the in-memory storage back end.
        .target(
            name: "BrokerTestSupport",
            dependencies: ["BrokerCore", "BrokerFileStore", "BrokerRedis", "BrokerPostgres", "BrokerHTTP", "BrokerTLS"],
            path: "Tests/BrokerTestSupport", swiftSettings: strict),

        // libFuzzer targets: `scripts/fuzz` builds them with -DFUZZING and -sanitize=fuzzer,address;
        // a plain `swift build` compiles them into a stub that says so.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport", swiftSettings: strict),
        .executableTarget(
            name: "FuzzHTTP", dependencies: ["FuzzSupport", "BrokerHTTP", "BrokerCrypto"], path: "Fuzz/FuzzHTTP", swiftSettings: strict),
        .executableTarget(
            name: "FuzzDecoders", dependencies: ["FuzzSupport", "BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerRedis"],
            path: "Fuzz/FuzzDecoders", swiftSettings: strict),
        .executableTarget(
            name: "FuzzProviders", dependencies: ["FuzzSupport", "BrokerCore", "BrokerCrypto", "BrokerFileStore"],
            path: "Fuzz/FuzzProviders", swiftSettings: strict),

        .testTarget(name: "BrokerHTTPTests", dependencies: ["BrokerHTTP", "BrokerCrypto", "BrokerTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "BrokerFakeProvidersTests", dependencies: ["BrokerFakeProviders", "BrokerHTTP", "BrokerCrypto", "BrokerTestSupport"],
            swiftSettings: strict),
        .testTarget(name: "BrokerCryptoTests", dependencies: ["BrokerCrypto"], swiftSettings: strict),
        .testTarget(
            name: "BrokerCoreTests", dependencies: ["BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerTestSupport"],
            swiftSettings: strict),
        // The file store's own tests: accounts snapshot and journal, flow and outbox journals, the data directory.
        .testTarget(
            name: "BrokerFileStoreTests", dependencies: ["BrokerFileStore", "BrokerCore", "BrokerCrypto", "BrokerTestSupport"],
            swiftSettings: strict),
        // The StorageBackend conformance suites, run against every back end (files, Redis, PostgreSQL, memory).
        .testTarget(
            name: "StorageBackendTests",
            dependencies: ["BrokerCore", "BrokerFileStore", "BrokerRedis", "BrokerPostgres", "BrokerTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "BrokerRedisTests",
            dependencies: ["BrokerRedis", "BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerTLS", "BrokerTestSupport"],
            swiftSettings: strict),
        // The PostgreSQL client against real `postgres` servers the tests start, and its codecs against vectors.
        .testTarget(
            name: "BrokerPostgresTests", dependencies: ["BrokerPostgres", "BrokerHTTP", "BrokerCrypto", "BrokerTestSupport"],
            swiftSettings: strict),
        .testTarget(
            name: "BrokerAppTests",
            dependencies: [
                "BrokerApp", "BrokerHTTP", "BrokerCore", "BrokerCrypto", "BrokerFileStore", "BrokerRedis", "BrokerFakeProviders",
                "BrokerTestSupport", "BrokerURLSession", "BrokerPostgres",
            ], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
