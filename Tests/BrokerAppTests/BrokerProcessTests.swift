#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The executable as operators run it: start-up, probes, metrics, signals, exit codes.
@Suite(.serialized) struct BrokerProcessTests {
    static func tempDir() -> String {
        let path = NSTemporaryDirectory() + "broker-test-" + UUID().uuidString
        return path
    }

    @Test func servesProbesAndMetricsThenStopsCleanlyOnSIGTERM() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try BrokerProcess(environment: ["BROKER_DATA_DIR": dir + "/data"])
        #expect(HTTPGet.status(port: broker.port, path: "/healthz")?.0 == 200)
        #expect(HTTPGet.status(port: broker.port, path: "/readyz")?.0 == 200)
        let metrics = try #require(HTTPGet.status(port: broker.port, path: "/metrics"))
        #expect(metrics.0 == 200)
        #expect(metrics.1.contains("broker_http_requests_total{route=\"/healthz\",status=\"2xx\"} 1"))
        #expect(metrics.1.contains("broker_http_request_duration_seconds_bucket{le=\"+Inf\"}"))
        // The scrape's own connection is open; earlier ones may still be finishing their close.
        let open = metrics.1.split(separator: "\n").first { $0.hasPrefix("broker_http_open_connections ") }
        #expect(open.flatMap { Int($0.split(separator: " ")[1]) }.map { $0 >= 1 } == true)
        // The data directory is created 0700.
        var info = stat()
        #expect(stat(dir + "/data", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        broker.signal(SIGTERM)
        #expect(broker.waitForExit(timeout: 5) == 0)
        #expect(broker.log.contains("\"msg\":\"request\""))
        #expect(broker.log.contains("\"path\":\"/healthz\""))
    }

    @Test func sigintAlsoStopsIt() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try BrokerProcess(environment: ["BROKER_DATA_DIR": dir])
        broker.signal(SIGINT)
        #expect(broker.waitForExit(timeout: 5) == 0)
    }

    @Test func readinessIs503WhenTheDataDirectoryCannotBeWritten() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try BrokerProcess(environment: ["BROKER_DATA_DIR": dir])
        #expect(HTTPGet.status(port: broker.port, path: "/readyz")?.0 == 200)
        // Replace the directory by a file: writes fail even for root.
        try FileManager.default.removeItem(atPath: dir)
        #expect(FileManager.default.createFile(atPath: dir, contents: Data("x".utf8)))
        let ready = try #require(HTTPGet.status(port: broker.port, path: "/readyz"))
        #expect(ready.0 == 503)
        #expect(ready.1.contains("storage_not_writable"))
        #expect(HTTPGet.status(port: broker.port, path: "/healthz")?.0 == 200)
    }

    @Test func invalidConfigurationExitsWithCode2NamingTheVariable() throws {
        let process = Process()
        process.executableURL = BrokerProcess.executable
        process.environment = ["BROKER_PORT": "not-a-port"]
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 2)
        #expect(text.contains("BROKER_PORT"))
    }

    @Test func healthcheckSubcommandReflectsTheServer() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let broker = try BrokerProcess(environment: ["BROKER_DATA_DIR": dir])
        func healthcheck(port: Int) throws -> Int32 {
            let process = Process()
            process.executableURL = BrokerProcess.executable
            process.arguments = ["healthcheck"]
            process.environment = ["BROKER_PORT": String(port)]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(try healthcheck(port: broker.port) == 0)
        broker.signal(SIGTERM)
        _ = broker.waitForExit(timeout: 5)
        #expect(try healthcheck(port: broker.port) == 1)
    }
}
