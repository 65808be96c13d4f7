import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `GET /account` of accounts already acknowledged, at a target rate, until a stop file exists: the read load of
/// scripts/postgres-failover (issue 35: 5,000 reads/s beside 500 sign-ins/s). wrk reads as fast as it can, which on
/// a shared 2-core machine starves the sign-ins; this offers the rate and no more.
///
/// The ids come from the acked files as they grow (re-read every half second), so an account acknowledged through
/// one broker a moment ago is read through the other too: every read must answer 200, or 503 while there is no
/// primary.
enum ReadStream {
    struct Options {
        var brokerPort: Int
        var apiKey: String
        /// Files of acknowledged account ids, one a line.
        var ackedPaths: [String]
        var stopPath: String
        /// Reads started per second by this process, across its clients; 0 for as fast as they go.
        var rate: Double
        var concurrency: Int
    }

    private struct Tally {
        var reads = 0
        var socketErrors = 0
        var answers: [String: Int] = [:]
    }

    static func run(_ options: Options) {
        let ids = Mutex<[String]>([])
        let stopped = Atomic<Bool>(false)
        let tally = Mutex(Tally())
        let pacer = Pacer(rate: options.rate)
        let started = Date()
        let group = DispatchGroup()
        // One thread reads what the acked files gained since its last pass; the readers take the list it last
        // published. Only the new lines are read: re-reading tens of thousands of ids twice a second took a
        // noticeable share of the two cores the brokers measured here share.
        group.enter()
        Thread {
            var read: [String] = []
            var offsets = [UInt64](repeating: 0, count: options.ackedPaths.count)
            while access(options.stopPath, F_OK) != 0 {
                for (index, path) in options.ackedPaths.enumerated() {
                    guard let file = FileHandle(forReadingAtPath: path) else { continue }
                    defer { try? file.close() }
                    guard (try? file.seek(toOffset: offsets[index])) != nil, let data = try? file.readToEnd() else { continue }
                    // A line without its newline yet is left for the next pass.
                    guard let end = data.lastIndex(of: UInt8(ascii: "\n")) else { continue }
                    offsets[index] += UInt64(end - data.startIndex + 1)
                    for line in data[..<end].split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
                        read.append(String(decoding: line, as: UTF8.self).replacingOccurrences(of: ":", with: "%3A"))
                    }
                }
                let published = read
                ids.withLock { $0 = published }
                Thread.sleep(forTimeInterval: 0.5)
            }
            stopped.store(true, ordering: .relaxed)
            group.leave()
        }.start()
        let authorization = [("Authorization", "Bearer \(options.apiKey)")]
        for worker in 0..<options.concurrency {
            group.enter()
            Thread {
                let broker = BenchClient(port: options.brokerPort)
                // splitmix64: SystemRandomNumberGenerator is a getrandom(2) call per draw.
                var state = UInt64(worker) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(UInt(bitPattern: Date().timeIntervalSince1970.hashValue))
                var mine = Tally()
                var n = worker
                while !stopped.load(ordering: .relaxed) {
                    state &+= 0x9E37_79B9_7F4A_7C15
                    var z = state
                    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                    let draw = z ^ (z >> 31)
                    let id = ids.withLock { $0.isEmpty ? nil : $0[Int(draw % UInt64($0.count))] }
                    guard let id else {
                        Thread.sleep(forTimeInterval: 0.02)
                        continue
                    }
                    pacer.wait()
                    mine.reads += 1
                    if let reply = broker.get("/account?id=\(id)", headers: authorization) {
                        mine.answers[String(reply.status), default: 0] += 1
                    } else {
                        mine.socketErrors += 1
                        Thread.sleep(forTimeInterval: 0.02)
                    }
                    n += 1
                    // Merged in batches: a lock per read would cost more than the read's parsing.
                    if n % 256 == 0 { merge(&mine, into: tally) }
                }
                merge(&mine, into: tally)
                group.leave()
            }.start()
        }
        group.wait()
        let elapsed = Date().timeIntervalSince(started)
        let result = tally.withLock { $0 }
        let json: [String: Any] = [
            "reads": result.reads, "seconds": (elapsed * 10).rounded() / 10, "answers": result.answers,
            "socket_errors": result.socketErrors, "rate": options.rate, "concurrency": options.concurrency,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: data, as: UTF8.self))
    }

    private static func merge(_ mine: inout Tally, into tally: borrowing Mutex<Tally>) {
        let part = mine
        mine = Tally()
        tally.withLock { total in
            total.reads += part.reads
            total.socketErrors += part.socketErrors
            for (key, count) in part.answers { total.answers[key, default: 0] += count }
        }
    }
}
