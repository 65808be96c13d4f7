#!/usr/bin/env bash
# Microbenchmark of HTTPParser in release mode; run by hand, not a test.
# Usage: scripts/bench-parser.sh [iterations]
# Compiles Sources/BrokerHTTP together with a small driver using swiftc -O and
# prints nanoseconds per request for a few typical requests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
iterations="${1:-1000000}"
cat > "$work/main.swift" <<'SWIFT'
import Dispatch

let iterations = Int(CommandLine.arguments[1]) ?? 1_000_000
let samples: [(String, String)] = [
    ("healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
    ("browser GET", "GET /authorize?provider=github&return_to=%2Faccount HTTP/1.1\r\nHost: broker.example.com\r\n"
        + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0\r\n"
        + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
        + "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n"
        + "Cookie: flow=abcdefghijklmnopqrstuvwxyz0123456789\r\nConnection: keep-alive\r\n\r\n"),
    ("POST 64 B body", "POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n"
        + String(repeating: "b", count: 64)),
    ("chunked POST", "POST /token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "20\r\n" + String(repeating: "c", count: 32) + "\r\n20\r\n" + String(repeating: "c", count: 32) + "\r\n0\r\n\r\n"),
]

for (name, text) in samples {
    let bytes = Array(text.utf8)
    var checksum = 0
    let start = DispatchTime.now().uptimeNanoseconds
    var parser = HTTPParser()  // one parser, as on a keep-alive connection
    for _ in 0..<iterations {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while true {
                let (event, consumed) = parser.parse(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                offset += consumed
                switch event {
                case .head(let head): checksum &+= head.path.utf8.count
                case .end(let body): checksum &+= body.count; return
                case .needMore, .error: fatalError("unexpected \(event)")
                }
            }
        }
    }
    let elapsed = DispatchTime.now().uptimeNanoseconds - start
    print("\(name): \(elapsed / UInt64(iterations)) ns/request (checksum \(checksum))")
}
SWIFT
swiftc -O -wmo -module-name BenchParser "$root"/Sources/BrokerHTTP/*.swift "$work/main.swift" -o "$work/bench"
"$work/bench" "$iterations"
