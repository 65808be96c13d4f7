import BrokerHTTP
import Dispatch

/// Nanoseconds per request of the HTTP/1.1 parser on a few typical requests, parsed again and again
/// on one parser as on a keep-alive connection; a checksum keeps the optimizer from skipping work.
enum ParserBench {
    /// The requests measured: a probe, a browser request with cookies, a small JSON body and a chunked one.
    static let samples: [(name: String, text: String)] = [
        ("healthz", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        (
            "browser GET",
            "GET /authorize?provider=github&return_to=%2Faccount HTTP/1.1\r\nHost: broker.example.com\r\n"
                + "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0\r\n"
                + "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
                + "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br\r\n"
                + "Cookie: flow=abcdefghijklmnopqrstuvwxyz0123456789\r\nConnection: keep-alive\r\n\r\n"
        ),
        (
            "POST 64 B body",
            "POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n"
                + String(repeating: "b", count: 64)
        ),
        (
            "chunked POST",
            "POST /token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "20\r\n" + String(repeating: "c", count: 32) + "\r\n20\r\n" + String(repeating: "c", count: 32) + "\r\n0\r\n\r\n"
        ),
    ]

    /// Parses each sample `iterations` times and prints `name: N ns/request`.
    static func run(iterations: Int) {
        for (name, text) in samples {
            let bytes = Array(text.utf8)
            var checksum = 0
            let start = DispatchTime.now().uptimeNanoseconds
            var parser = HTTPParser()
            for _ in 0..<iterations {
                bytes.withUnsafeBytes { raw in
                    var offset = 0
                    while true {
                        let (event, consumed) = parser.parse(UnsafeRawBufferPointer(rebasing: raw[offset...]))
                        offset += consumed
                        switch event {
                        case .head(let head): checksum &+= head.path.utf8.count
                        case .end(let body): checksum &+= body.count; return
                        case .needMore, .error, .bodyPart: fatalError("parser-bench: unexpected \(event) for \(name)")
                        }
                    }
                }
            }
            let elapsed = DispatchTime.now().uptimeNanoseconds - start
            print("\(name): \(elapsed / UInt64(max(iterations, 1))) ns/request (checksum \(checksum))")
        }
    }
}
