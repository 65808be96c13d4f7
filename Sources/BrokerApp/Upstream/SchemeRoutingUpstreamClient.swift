import BrokerCore

/// Which client carries `http://` calls (`BROKER_UPSTREAM_CLIENT`); `https://` stays on URLSession until the TLS transport.
public enum UpstreamClientKind: String, Sendable, CaseIterable {
    /// The broker's own HTTP/1.1 client on its epoll workers.
    case native
    /// URLSession (FoundationNetworking and libcurl).
    case urlsession
}

/// Sends `http://` calls to one client and everything else to another.
public struct SchemeRoutingUpstreamClient: UpstreamClient {
    let plain: any UpstreamClient
    let other: any UpstreamClient

    /// The client `kind` names for `http://`, URLSession for the rest, both with the same timeout and cap.
    public static func make(
        _ kind: UpstreamClientKind, timeout: Double, maxResponseBytes: Int = URLSessionUpstreamClient.defaultMaxResponseBytes,
        truncatesLongAnswers: Bool = false
    ) -> any UpstreamClient {
        let urlSession = URLSessionUpstreamClient(
            timeout: timeout, maxResponseBytes: maxResponseBytes, truncatesLongAnswers: truncatesLongAnswers)
        switch kind {
        case .urlsession: return urlSession
        case .native:
            let native = EpollUpstreamClient(
                timeout: timeout, maxResponseBytes: maxResponseBytes, truncatesLongAnswers: truncatesLongAnswers)
            return SchemeRoutingUpstreamClient(plain: native, other: urlSession)
        }
    }

    /// Sends `request` through the client for its scheme.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let isPlain = request.url.utf8.count > 7 && request.url.prefix(7).lowercased() == "http://"
        return try await (isPlain ? plain : other).send(request)
    }
}
