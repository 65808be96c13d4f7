import BrokerApp

extension UpstreamClientFactory {
    /// Clients on URLSession (FoundationNetworking and libcurl), for the benchmark's comparison; it does not read the
    /// CA file (libcurl uses the system's store).
    public static let urlSession = UpstreamClientFactory { settings in
        URLSessionUpstreamClient(
            timeout: settings.timeout, maxResponseBytes: settings.maxResponseBytes,
            truncatesLongAnswers: settings.truncatesLongAnswers)
    }
}
