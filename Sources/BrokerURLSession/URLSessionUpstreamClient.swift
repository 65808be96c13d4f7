import BrokerCore
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``UpstreamClient`` on URLSession: ephemeral, no cookies, no cache, no redirects, one overall timeout, a bounded answer.
///
/// RFC 9700 §4.11: token and user-info calls must not be redirected elsewhere,
/// so a 3xx comes back as the response and fails validation as non-2xx.
/// A provider's answer is read into memory only up to `maxResponseBytes`, so a
/// hostile or broken provider cannot make the broker hold more than that per call.
public struct URLSessionUpstreamClient: UpstreamClient {
    private let owner: SessionOwner
    private let timeout: Double
    private let maxResponseBytes: Int
    private let truncatesLongAnswers: Bool

    /// The default cap on an answer's body: token and user-info answers are a few kilobytes.
    public static let defaultMaxResponseBytes = 1 << 20

    /// How many calls to one provider host may be in flight at once, each on its own connection.
    public static let connectionsPerHost = 64

    /// Creates a client whose requests fail with ``UpstreamError/timeout`` after `timeout` seconds (default 10)
    /// and with ``UpstreamError/tooLarge(limit:)`` when an answer's decoded body passes `maxResponseBytes`; with
    /// `truncatesLongAnswers`, such an answer is returned instead with its status and its body cut at the cap
    /// (a webhook receiver's answer is judged by its status alone).
    public init(timeout: Double = 10, maxResponseBytes: Int = defaultMaxResponseBytes, truncatesLongAnswers: Bool = false) {
        precondition(timeout > 0, "URLSessionUpstreamClient: the timeout must be positive")
        precondition(maxResponseBytes > 0, "URLSessionUpstreamClient: the answer cap must be positive")
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.truncatesLongAnswers = truncatesLongAnswers
        let configuration = URLSessionConfiguration.ephemeral
        // A backstop only: the exact deadline is SessionOwner's, since Linux rounds these down to whole seconds.
        configuration.timeoutIntervalForRequest = timeout.rounded(.up) + 1
        configuration.timeoutIntervalForResource = timeout.rounded(.up) + 1
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCredentialStorage = nil
        // FoundationNetworking's default is 6 connections per host: behind a provider answering in
        // 200 ms that caps token exchanges near 30 a second, and queued calls cost curl timer work.
        configuration.httpMaximumConnectionsPerHost = Self.connectionsPerHost
        owner = SessionOwner(configuration: configuration)
    }

    /// Sends `request` once and returns the response of any status; throws on timeout, transport failure,
    /// an answer over the cap, or cancellation.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        guard let url = URL(string: request.url), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else {
            throw .transport(.invalidRequest, "invalid URL")
        }
        var urlRequest = URLRequest(
            url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData, timeoutInterval: timeout.rounded(.up) + 1)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers {
            urlRequest.addValue(value, forHTTPHeaderField: name)
        }
        // RFC 9110 §12.5.3: ask for the body as is. FoundationNetworking still decodes a compressed
        // answer, and the cap counts decoded bytes, so this only spares honest providers the work.
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if !request.body.isEmpty || request.method == "POST" {
            urlRequest.httpBody = Data(request.body)
        }
        let result = await owner.perform(urlRequest, timeout: timeout, limit: maxResponseBytes, truncates: truncatesLongAnswers)
        return try result.get()
    }
}
