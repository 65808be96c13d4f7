import BrokerCore
import BrokerHTTP
import BrokerTestSupport
import Foundation
import Synchronization

@testable import BrokerApp

/// An in-process broker on 127.0.0.1:0 with its own data directory and a log file to scan.
///
/// Started for the current ``TestScope``, which stops it and removes its directory when the test ends.
/// With `listen: false` no socket is opened: tests call its routes in process with ``respond(_:_:headers:body:)``.
final class BrokerHarness: Sendable {
    let broker: Broker
    let dataDirectory: String
    let logPath: String
    let environment: [String: String]
    private let stopped = Atomic<Bool>(false)
    static let apiKey = "test-api-key-0123456789abcdef"

    init(
        providersJSON: String, environment extra: [String: String] = [:], dataDirectory: String? = nil,
        upstream: (any UpstreamClient)? = nil, now: @escaping @Sendable () -> Date = { Date() }, listen: Bool = true
    ) throws {
        let root = try TemporaryDirectory.scoped(prefix: "broker-e2e")
        self.dataDirectory = dataDirectory ?? root + "/data"
        logPath = root + "/broker.log"
        let providersPath = root + "/providers.json"
        try Data(providersJSON.utf8).write(to: URL(fileURLWithPath: providersPath))
        var env: [String: String] = [
            "BROKER_PORT": "0", "BROKER_DATA_DIR": self.dataDirectory, "BROKER_PROVIDERS_FILE": providersPath,
            "BROKER_API_KEY": Self.apiKey, "BROKER_LOG_FORMAT": "json",
            // Generous: on a loaded 2-core machine (another test suite running beside this one) a local fake
            // provider has been seen to take over 30 s to answer. A test of the timeout itself sets its own.
            "BROKER_UPSTREAM_TIMEOUT": "120",
            "BROKER_RETURN_TO_ALLOWLIST": "https://app.example.com,http://localhost:3000",
        ]
        env.merge(extra) { $1 }
        environment = env
        let configuration = try BrokerConfiguration.from(environment: env)
        let fd = open(logPath, O_CREAT | O_WRONLY | O_APPEND, 0o600)
        let logger = BrokerLogger(format: .json, writer: LogWriter(fd: fd))
        broker = try Broker(configuration: configuration, logger: logger, upstream: upstream, now: now)
        TestScope.required("a broker")?.onEnd { [self] in await stop() }
        if listen { try broker.start() }
    }

    var port: Int { broker.port }

    /// Answers a request through the broker's router in process, as the server would, without a socket.
    func respond(_ method: HTTPMethod = .GET, _ target: String, headers: [(String, String)] = [], body: String = "") async -> Response {
        await broker.server.router.respond(to: .make(method, target, headers: headers, body: body))
    }
    var log: String { broker.logger.flush(); return (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Stops the broker; later calls do nothing.
    func stop() async {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        await broker.shutdown()
    }

    /// Every byte under the data directory, as text, for secret scans.
    func dataDirectoryText() -> String {
        var all = ""
        let enumerator = FileManager.default.enumerator(atPath: dataDirectory)
        while let item = enumerator?.nextObject() as? String {
            if let data = FileManager.default.contents(atPath: dataDirectory + "/" + item) {
                all += String(decoding: data, as: UTF8.self)
            }
        }
        return all
    }
}
