// A throwaway driver for store-bench.sh: compiled with swiftc together with the
// store sources, not part of the package. Modes:
//   seed DIR N     write N account files quickly (no fsync) for start-up tests
//   put DIR N      N durable puts, 64 in flight; prints writes/s
//   open DIR       time to open (load and validate) the repository
//   get DIR N      N gets of random ids from memory; prints gets/s
//   one DIR        a single put, for strace
//   loop DIR       put one account again and again, printing each acknowledged counter
//   check DIR      open the store and print that account's counter (start-up fails on a torn record)
import Foundation

func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func account(_ index: Int) -> Account {
    Account(provider: index.isMultiple(of: 2) ? "github" : "google", uid: "user-\(index)",
            accessToken: Secret("token-\(index)-" + String(repeating: "x", count: 40)), tokenType: "bearer",
            scope: "repo", refreshToken: Secret("refresh-\(index)"),
            expiresAt: Date(timeIntervalSince1970: 1_796_029_200), createdAt: Date(timeIntervalSince1970: 1_796_025_600),
            updatedAt: Date(timeIntervalSince1970: 1_796_025_600))
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { print("usage: StoreBench seed|put|open|get|one DIR [N]"); exit(2) }
let directory = arguments[2]
let count = arguments.count > 3 ? Int(arguments[3])! : 1

switch arguments[1] {
case "seed":
    try DataDirectory.prepare(directory)
    try DataDirectory.prepare(directory + "/accounts")
    let codec = PlainJSONAccountCodec()
    for index in 0..<count {
        let name = StoreFileName.forAccount(id: account(index).id)!
        try Data(try codec.encode(account(index))).write(to: URL(fileURLWithPath: directory + "/accounts/" + name))
    }
case "put":
    let repository = try JSONFileAccountRepository(directory: directory)
    let offset = Int.random(in: 10_000_000...20_000_000)
    let elapsed = try await seconds {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                if index >= 64 { try await group.next() }
                group.addTask { try await repository.put(account(offset + index)) }
            }
            try await group.waitForAll()
        }
    }
    print(String(format: "put: %d durable writes in %.3f s = %.0f writes/s", count, elapsed, Double(count) / elapsed))
case "open":
    var loaded = 0
    let elapsed = try await seconds {
        loaded = try await JSONFileAccountRepository(directory: directory).list(provider: nil).count
    }
    print(String(format: "open: %d accounts loaded in %.3f s", loaded, elapsed))
case "get":
    let repository = try JSONFileAccountRepository(directory: directory)
    let ids = try await repository.list(provider: nil).map(\.id)
    var found = 0
    let elapsed = try await seconds {
        for _ in 0..<count where try await repository.get(id: ids.randomElement()!) != nil { found += 1 }
    }
    print(String(format: "get: %d reads in %.3f s = %.0f reads/s", found, elapsed, Double(count) / elapsed))
case "one":
    try await JSONFileAccountRepository(directory: directory).put(account(1))
case "loop":
    let repository = try JSONFileAccountRepository(directory: directory)
    setvbuf(stdout, nil, _IOLBF, 0)
    var counter = Int(try await repository.get(id: account(0).id)?.scope ?? "0")!
    while true {
        counter += 1
        var next = account(0)
        next.scope = String(counter)
        try await repository.put(next)
        print(counter)
    }
case "check":
    print(try await JSONFileAccountRepository(directory: directory).get(id: account(0).id)?.scope ?? "0")
default:
    print("unknown mode \(arguments[1])")
    exit(2)
}
