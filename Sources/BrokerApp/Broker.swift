import BrokerCore
import BrokerHTTP
import Dispatch
import Foundation
import Synchronization

/// The whole service: configuration, storage, routes and the HTTP server, wired together.
public final class Broker: Sendable {
    /// The configuration it runs with.
    public let configuration: BrokerConfiguration
    /// Where its log lines go.
    public let logger: BrokerLogger
    /// Ready or not, and why.
    public let readiness: Readiness
    let server: HTTPServer

    /// Builds the broker: prepares the data directory and the routes. Nothing listens yet.
    public init(configuration: BrokerConfiguration, logger: BrokerLogger) throws {
        self.configuration = configuration
        self.logger = logger
        let dataDirectory = configuration.dataDirectory
        do {
            try DataDirectory.prepare(dataDirectory)
        } catch {
            throw ConfigurationError(variable: "BROKER_DATA_DIR", message: "\(error)")
        }
        let readiness = Readiness { DataDirectory.isWritable(dataDirectory) ? nil : "storage_not_writable" }
        self.readiness = readiness
        let metricsSource = ServerBox()
        let router = BrokerRoutes.make(readiness: readiness, metrics: metricsSource)
        server = HTTPServer(configuration: configuration.server, router: router,
                            observer: AccessLog(logger: logger, enabled: configuration.accessLog))
        metricsSource.set(server)
    }

    /// Starts listening; the bound port is `port` afterwards.
    public func start() throws {
        try server.start()
        logger.log(.info, "listening", [
            ("host", .string(configuration.server.host)), ("port", .int(server.port)),
            ("data_dir", .string(configuration.dataDirectory)),
        ])
    }

    /// The bound port.
    public var port: Int { server.port }

    /// Graceful stop: readiness turns 503, the listener closes, in-flight requests finish,
    /// idle connections close; returns within the configured grace period.
    public func shutdown() async {
        readiness.beginShutdown()
        logger.log(.info, "shutting down", [("grace_s", .double(configuration.shutdownGrace, decimals: 1)),
                                             ("open_connections", .int(server.openConnections))])
        await server.shutdown(grace: configuration.shutdownGrace)
        logger.log(.info, "stopped")
        logger.flush()
    }
}

/// Lets a route read the server it is served by (metrics), which exists only after the router.
final class ServerBox: Sendable {
    private let server = Mutex<HTTPServer?>(nil)
    func set(_ value: HTTPServer) { server.withLock { $0 = value } }
    func snapshot() -> HTTPMetricsSnapshot? { server.withLock { $0 }?.metricsSnapshot() }
}
