import BrokerCore

/// Which client carries provider and webhook calls (`BROKER_UPSTREAM_CLIENT`).
public enum UpstreamClientKind: String, Sendable, CaseIterable {
    /// The broker's own HTTP/1.1 client on its epoll workers, `http://` and `https://` (TLS on the system's OpenSSL).
    case native
    /// URLSession (FoundationNetworking and libcurl), kept as the fallback.
    case urlsession

    /// The client this kind names, with the timeout, answer cap and cut-off behaviour given.
    ///
    /// `caFile` (`BROKER_UPSTREAM_CA_FILE`) adds a PEM file of CA certificates to the system's trust store for the
    /// native client's `https://` calls; URLSession uses libcurl's store and does not read it.
    public func make(
        timeout: Double, maxResponseBytes: Int = URLSessionUpstreamClient.defaultMaxResponseBytes,
        truncatesLongAnswers: Bool = false, caFile: String? = nil
    ) -> any UpstreamClient {
        switch self {
        case .urlsession:
            URLSessionUpstreamClient(timeout: timeout, maxResponseBytes: maxResponseBytes, truncatesLongAnswers: truncatesLongAnswers)
        case .native:
            EpollUpstreamClient(
                timeout: timeout, maxResponseBytes: maxResponseBytes, truncatesLongAnswers: truncatesLongAnswers,
                client: EpollUpstreamClient.sharedClient(caFile: caFile))
        }
    }
}
