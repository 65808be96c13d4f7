import BrokerCore

/// Makes a broker's outbound clients: one for provider calls, one for webhook deliveries.
///
/// ``native`` (the broker's own HTTP/1.1 client on its epoll workers, `http://` and `https://` over the system's
/// OpenSSL) is what `token-broker` uses. Another factory is injected only by tools that are not shipped, such as
/// the benchmark's URLSession broker, so `token-broker` links no other HTTP stack.
public struct UpstreamClientFactory: Sendable {
    /// What one client is made with.
    public struct Settings: Sendable {
        /// Seconds a call may take in all.
        public var timeout: Double
        /// Bytes of an answer's body read before it is refused (or, with `truncatesLongAnswers`, cut there).
        public var maxResponseBytes: Int
        /// Past the cap, answer with the status and the body cut at the cap rather than fail.
        public var truncatesLongAnswers: Bool
        /// A PEM file of CA certificates trusted for `https://` besides the system's store (`BROKER_UPSTREAM_CA_FILE`).
        public var caFile: String?
    }

    private let build: @Sendable (Settings) -> any UpstreamClient

    /// A factory that makes each client with `build`.
    public init(_ build: @escaping @Sendable (Settings) -> any UpstreamClient) {
        self.build = build
    }

    /// A client with the timeout, answer cap, cut-off behaviour and CA file given.
    public func make(
        timeout: Double, maxResponseBytes: Int = EpollUpstreamClient.defaultMaxResponseBytes,
        truncatesLongAnswers: Bool = false, caFile: String? = nil
    ) -> any UpstreamClient {
        build(
            Settings(timeout: timeout, maxResponseBytes: maxResponseBytes, truncatesLongAnswers: truncatesLongAnswers, caFile: caFile))
    }

    /// The broker's own client; the clients share one ``BrokerHTTP/HTTPClient`` (and its pools) per CA file.
    public static let native = UpstreamClientFactory { settings in
        EpollUpstreamClient(
            timeout: settings.timeout, maxResponseBytes: settings.maxResponseBytes,
            truncatesLongAnswers: settings.truncatesLongAnswers,
            client: EpollUpstreamClient.sharedClient(caFile: settings.caFile))
    }
}
