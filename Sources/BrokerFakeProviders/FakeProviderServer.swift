import BrokerHTTP

/// The socket side every fake provider shares: its routes served by a ``HTTPServer`` on one address.
///
/// A fake builds its ``Router`` once; tests may call that router in process
/// (``Router/respond(to:)``) and never start a server, or start one here and
/// reach it at ``baseURL``.
public final class FakeProviderServer: Sendable {
    /// The server; nothing listens until ``start()``.
    public let server: HTTPServer

    /// Prepares a server for `router` on `host`:`port` (0: the kernel picks one; read it back from ``port``).
    public init(router: Router, host: String = "127.0.0.1", port: Int = 0) {
        var configuration = HTTPServerConfiguration(host: host, port: port)
        // Two workers are plenty for a fake, and leave the cores to what is being tested.
        configuration.workerCount = 2
        server = HTTPServer(configuration: configuration, router: router)
    }

    /// Binds and starts answering; throws when the address cannot be bound.
    public func start() throws {
        try server.start()
    }

    /// The bound port (after ``start()``).
    public var port: Int { server.port }

    /// `http://HOST:PORT`, the address to put in a providers file.
    public var baseURL: String { "http://\(server.configuration.host):\(port)" }

    /// Stops accepting and closes every connection within a second.
    public func stop() async {
        await server.shutdown(grace: 1)
    }
}
