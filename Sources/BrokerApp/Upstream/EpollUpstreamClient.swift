import BrokerCore
import BrokerHTTP
import Synchronization

/// An ``UpstreamClient`` on the broker's own ``HTTPClient``: its sockets run on the server's epoll workers.
///
/// No redirects (RFC 9700 §4.11: a 3xx comes back as the response and fails validation), cookies or cache; one
/// overall timeout; an answer's body held to `maxResponseBytes` as it arrives (or cut
/// there, with `truncatesLongAnswers`). It asks for `Accept-Encoding: identity` and
/// refuses a body labelled with another coding instead of inflating it. `https://`
/// goes over TLS 1.2+ with the certificate checked against the system's trust store
/// (plus the client's CA file) and the host name.
public struct EpollUpstreamClient: UpstreamClient {
    private let client: HTTPClient
    private let timeout: Double
    private let maxResponseBytes: Int
    private let truncatesLongAnswers: Bool

    /// The default cap on an answer's body: token and user-info answers are a few kilobytes.
    public static let defaultMaxResponseBytes = 1 << 20

    /// How many calls to one host may be in flight at once, each on its own connection.
    public static let connectionsPerHost = 64

    /// The clients brokers in the process share, one per CA file (nil: the system's store alone), so pools are shared too.
    private static let sharedClients = Mutex<[String?: HTTPClient]>([:])

    /// The shared client trusting the system's store plus `caFile`.
    static func sharedClient(caFile: String? = nil) -> HTTPClient {
        sharedClients.withLock { clients in
            if let client = clients[caFile] { return client }
            let client = HTTPClient(
                configuration: HTTPClient.Configuration(maxConnectionsPerHost: connectionsPerHost, caFile: caFile))
            clients[caFile] = client
            return client
        }
    }

    /// Creates a client whose calls fail with ``UpstreamError/timeout`` after `timeout` seconds and with
    /// ``UpstreamError/tooLarge(limit:)`` when an answer's body passes `maxResponseBytes`; with `truncatesLongAnswers`,
    /// such an answer is returned with its status and its body cut at the cap. The connect timeout is the call's timeout.
    public init(
        timeout: Double = 10, maxResponseBytes: Int = defaultMaxResponseBytes,
        truncatesLongAnswers: Bool = false, client: HTTPClient? = nil
    ) {
        precondition(timeout > 0, "EpollUpstreamClient: the timeout must be positive")
        precondition(maxResponseBytes > 0, "EpollUpstreamClient: the answer cap must be positive")
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.truncatesLongAnswers = truncatesLongAnswers
        self.client = client ?? Self.sharedClient()
    }

    /// Sends `request` once (or once more on a fresh connection, when a pooled one turns out closed before answering)
    /// and returns the response of any status.
    public func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        let outbound = HTTPClientRequest(
            method: request.method, url: request.url, headers: request.headers.map { (name: $0.0, value: $0.1) },
            body: .bytes(request.body), addressPolicy: request.publicAddressesOnly ? .publicOnly : nil)
        do {
            let (head, body) = try await client.execute(
                outbound, timeout: timeout, maxBodyBytes: maxResponseBytes, truncating: truncatesLongAnswers)
            return UpstreamResponse(status: head.status, headers: head.headers.fields.map { ($0.name, $0.value) }, body: body)
        } catch {
            throw Self.upstreamError(error)
        }
    }

    /// The ``UpstreamError`` the rest of the broker expects for each cause; messages are fixed phrases.
    static func upstreamError(_ error: HTTPClientError) -> UpstreamError {
        switch error {
        case .deadline: .timeout
        case .connectTimeout: .connectTimeout
        case .tooLarge(let limit): .tooLarge(limit: limit)
        case .addressRefused: .transport(.addressRefused, "address refused by policy")
        case .connectRefused: .transport(.connectRefused, "connection refused")
        case .hostNotFound: .transport(.hostNotFound, "host not found")
        case .connectionLost: .transport(.connectionLost, "connection lost")
        case .refusedContentCoding: .transport(.badResponse, "content-encoded answer refused")
        case .badResponse: .transport(.badResponse, "malformed HTTP response")
        case .cancelled: .transport(.cancelled, "cancelled")
        case .invalidURL, .unsupportedScheme: .transport(.invalidRequest, "invalid URL")
        case .invalidRequest: .transport(.invalidRequest, "invalid request")
        case .tlsCertificate(let reason): .transport(.tlsCertificate, "TLS certificate: \(reason)")
        case .tlsHostname: .transport(.tlsHostname, "TLS certificate is not for this host")
        case .tlsVersion: .transport(.tlsVersion, "TLS version below 1.2 refused")
        case .tlsHandshake(let reason): .transport(.tlsHandshake, "TLS handshake: \(reason)")
        }
    }
}
