// broker-bench: load and scaling tools for scripts/bench (not part of the service).
//   broker-bench seed DIR COUNT            write COUNT sealed accounts weibo:0… into DIR
//   broker-bench seed-snapshot DIR COUNT [OWNERS]  the same written straight into a snapshot, each account of one of OWNERS end users
//   broker-bench seed-legacy DIR COUNT     the same in the former layout, one file per account under DIR/accounts/
//   broker-bench seed-redis URL COUNT DIR  the same into Redis (the key comes from DIR or BROKER_ENCRYPTION_KEY)
//   broker-bench count-redis URL DIR       cost of counting the accounts in Redis by status (/metrics), first and per scrape
//   broker-bench store-scaling ROOT SIZES  open/write/read/count cost of the file store at each size (comma list)
//   broker-bench flows BROKER PROVIDER CONCURRENCY SECONDS   full browser flows per second, against the
//                                          auto-approving fake Weibo of `fake-provider --kind weibo`
//   broker-bench stream BROKER PROVIDER ACKED STOP [RATE [CONCURRENCY]]   the same flows at RATE per second (default
//                                          250; 0 for unpaced) from CONCURRENCY clients (default 16) until the file STOP
//                                          exists, each acknowledged account id appended to ACKED; prints one JSON line
//                                          {ok, failed, answers, seconds, first_error, last_error} (scripts/postgres-failover)
//   broker-bench reads BROKER API_KEY ACKED[,ACKED…] STOP [RATE [CONCURRENCY]]   GET /account of ids from the ACKED
//                                          files (re-read as they grow) at RATE per second (default 2500; 0 unpaced)
//                                          from CONCURRENCY keep-alive clients (default 8) until STOP exists; prints
//                                          {reads, seconds, answers, socket_errors} (scripts/postgres-failover)
//   broker-bench parser [ITERATIONS]       nanoseconds per request of the HTTP parser (build with -c release)
//   broker-bench outbox DIR|REDIS_URL SECONDS CONCURRENCY   webhook events per second the outbox makes durable
//   broker-bench outbox-drain DIR COUNT[,COUNT…] [SECONDS]   a backlog of COUNT pending deliveries drained to a
//       local receiver for SECONDS (default 20): deliveries per second, and the time of a listing page of 100
//   broker-bench outbox-accounts DIR|REDIS_URL SECONDS CONCURRENCY [separate]   account changes with their event per
//                                          second, in one step (or, with `separate`, the change then the event)
//   broker-bench refresh-herd DIR DUE TRACKED CONCURRENCY   background refreshes per second (durable writes) against the
//                                          fake provider on a local socket, and RSS with TRACKED accounts in the store
//   broker-bench account-writes DIR SECONDS WRITERS   durable account writes (new sealed accounts) from WRITERS at once:
//                                          per second and latency p50/p99, in whichever store layout this binary has
//   broker-bench account-compaction DIR COUNT   the account journal of COUNT new sealed accounts: its size, its replay,
//                                          its compaction into a snapshot, and opening that snapshot
import Dispatch
import Foundation

let args = Array(CommandLine.arguments.dropFirst())
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("broker-bench: \(message)\n".utf8))
    exit(2)
}

switch args.first {
case "seed":
    guard args.count == 3, let count = Int(args[2]) else { fail("usage: seed DIR COUNT") }
    let t0 = Date()
    try await StoreBench.seed(args[1], count: count)
    print(String(format: "seeded=%d seconds=%.1f", count, Date().timeIntervalSince(t0)))
case "seed-snapshot":
    guard (3...4).contains(args.count), let count = Int(args[2]) else { fail("usage: seed-snapshot DIR COUNT [OWNERS]") }
    let t0 = Date()
    try StoreBench.seedSnapshot(args[1], count: count, owners: args.count == 4 ? Int(args[3]) ?? 0 : 0)
    print(String(format: "seeded=%d layout=snapshot seconds=%.1f", count, Date().timeIntervalSince(t0)))
case "seed-legacy":
    guard args.count == 3, let count = Int(args[2]) else { fail("usage: seed-legacy DIR COUNT") }
    let t0 = Date()
    try LegacySeed.seed(args[1], count: count)
    print(String(format: "seeded=%d layout=one-file-per-account seconds=%.1f", count, Date().timeIntervalSince(t0)))
case "seed-redis":
    guard args.count == 4, let count = Int(args[2]) else { fail("usage: seed-redis redis://HOST:PORT/DB COUNT KEY_DIR") }
    let t0 = Date()
    try await StoreBench.seedRedis(args[1], count: count, keyDirectory: args[3])
    print(String(format: "seeded=%d seconds=%.1f", count, Date().timeIntervalSince(t0)))
case "count-redis":
    guard args.count == 3 else { fail("usage: count-redis redis://HOST:PORT/DB KEY_DIR") }
    let (first, scrape, counted) = try await StoreBench.countRedis(args[1], keyDirectory: args[2])
    print(String(format: "counted=%d first_ms=%.1f scrape_ms=%.2f", counted, first, scrape))
case "store-scaling":
    guard args.count == 3 else { fail("usage: store-scaling ROOT 1,1000,10000,100000") }
    try await StoreBench.scaling(root: args[1], sizes: args[2].split(separator: ",").compactMap { Int($0) })
case "flows":
    guard args.count == 5, let b = Int(args[1]), let p = Int(args[2]), let c = Int(args[3]), let s = Double(args[4]) else {
        fail("usage: flows BROKER_PORT PROVIDER_PORT CONCURRENCY SECONDS")
    }
    FlowBench.run(brokerPort: b, providerPort: p, concurrency: c, seconds: s)
case "stream":
    guard (5...7).contains(args.count), let b = Int(args[1]), let p = Int(args[2]),
        let rate = Double(args.count > 5 ? args[5] : "250"), rate >= 0,
        let c = Int(args.count > 6 ? args[6] : "16"), c > 0
    else { fail("usage: stream BROKER_PORT PROVIDER_PORT ACKED_FILE STOP_FILE [RATE [CONCURRENCY]]") }
    FlowStream.run(
        .init(brokerPort: b, providerPort: p, ackedPath: args[3], stopPath: args[4], rate: rate, concurrency: c))
case "reads":
    guard (5...7).contains(args.count), let b = Int(args[1]), let rate = Double(args.count > 5 ? args[5] : "2500"), rate >= 0,
        let c = Int(args.count > 6 ? args[6] : "8"), c > 0
    else { fail("usage: reads BROKER_PORT API_KEY ACKED[,ACKED...] STOP_FILE [RATE [CONCURRENCY]]") }
    ReadStream.run(
        .init(
            brokerPort: b, apiKey: args[2], ackedPaths: args[3].split(separator: ",").map(String.init), stopPath: args[4],
            rate: rate, concurrency: c))
case "parser":
    guard args.count <= 2, let iterations = Int(args.count == 2 ? args[1] : "1000000"), iterations > 0 else {
        fail("usage: parser [ITERATIONS]")
    }
    ParserBench.run(iterations: iterations)
case "outbox":
    guard args.count == 4, let seconds = Double(args[2]), let concurrency = Int(args[3]), concurrency > 0 else {
        fail("usage: outbox DIR|redis://HOST:PORT/DB SECONDS CONCURRENCY")
    }
    try await OutboxBench.run(target: args[1], seconds: seconds, concurrency: concurrency)
case "outbox-drain":
    guard args.count >= 3, let counts = Optional(args[2].split(separator: ",").compactMap { Int($0) }), !counts.isEmpty
    else { fail("usage: outbox-drain DIR COUNT[,COUNT...] [SECONDS]") }
    try await OutboxDrainBench.run(root: args[1], counts: counts, seconds: args.count > 3 ? Double(args[3]) ?? 20 : 20)
case "outbox-accounts":
    guard args.count == 4 || (args.count == 5 && args[4] == "separate"), let seconds = Double(args[2]),
        let concurrency = Int(args[3]), concurrency > 0
    else {
        fail("usage: outbox-accounts DIR|redis://HOST:PORT/DB SECONDS CONCURRENCY [separate]")
    }
    try await OutboxAccountsBench.run(target: args[1], seconds: seconds, concurrency: concurrency, separate: args.count == 5)
case "refresh-herd":
    guard args.count == 5, let due = Int(args[2]), let tracked = Int(args[3]), let concurrency = Int(args[4]),
        due >= 0, tracked >= due, concurrency > 0
    else { fail("usage: refresh-herd DIR DUE TRACKED CONCURRENCY") }
    try await RefreshBench.run(directory: args[1], due: due, tracked: tracked, concurrency: concurrency)
case "account-writes":
    guard args.count == 4, let seconds = Double(args[2]), let writers = Int(args[3]), writers > 0 else {
        fail("usage: account-writes DIR SECONDS WRITERS")
    }
    try await AccountWritesBench.run(directory: args[1], seconds: seconds, concurrency: writers)
case "account-compaction":
    guard args.count == 3, let count = Int(args[2]), count > 0 else { fail("usage: account-compaction DIR COUNT") }
    try await AccountCompactionBench.run(directory: args[1], count: count)
default:
    fail(
        "usage: broker-bench seed | seed-redis | count-redis | store-scaling | flows | stream | reads | parser | outbox | outbox-drain | outbox-accounts | refresh-herd"
            + " | account-writes | account-compaction")
}
