import Dispatch
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Owns the URLSession of a ``URLSessionUpstreamClient``, refuses redirects, and invalidates the session when released.
final class SessionOwner: NSObject, URLSessionTaskDelegate, Sendable {
    // `nonisolated(unsafe)`: written once, under `lock`, on first use; URLSession itself is thread-safe.
    private nonisolated(unsafe) var storedSession: URLSession?
    private let configuration: URLSessionConfiguration
    private let lock = Mutex<Void>(())

    /// Where outbound deadlines fire.
    private static let deadlines = DispatchQueue(label: "token-broker.upstream-deadlines")

    /// Keeps `configuration`; the session (and libcurl behind it) starts on the first request,
    /// so an idle broker does not carry an HTTP client it has not used.
    init(configuration: URLSessionConfiguration) {
        self.configuration = configuration
        super.init()
    }

    /// The session, created with this object as its delegate on first use.
    private var session: URLSession {
        lock.withLock { _ in
            if let existing = storedSession { return existing }
            let created = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
            storedSession = created
            return created
        }
    }

    /// Lets running tasks finish, then releases the session and its delegate reference.
    deinit {
        storedSession?.finishTasksAndInvalidate()
    }

    /// Runs `request`, failing with ``UpstreamError/timeout`` once `timeout` seconds pass; cancelling the caller cancels the task.
    ///
    /// The deadline is enforced here rather than left to URLSession alone:
    /// FoundationNetworking on Linux rounds its timeouts down to whole seconds
    /// (0.5 s would become "no time at all").
    func perform(_ request: URLRequest, timeout: Double) async -> Result<UpstreamResponse, UpstreamError> {
        // Whichever comes first, the answer or the deadline, resumes the continuation; the other is ignored.
        let state = Mutex<(task: URLSessionDataTask?, done: Bool)>((nil, false))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>) in
                let finish = { @Sendable (result: Result<UpstreamResponse, UpstreamError>) in
                    let first = state.withLock { current -> Bool in
                        defer { current.done = true }
                        return !current.done
                    }
                    if first { continuation.resume(returning: result) }
                }
                let task = session.dataTask(with: request) { data, response, error in
                    finish(Self.outcome(data: data, response: response, error: error))
                }
                state.withLock { $0.task = task }
                task.resume()
                // A serial queue of our own: Dispatch's global queue may be busy with blocking work.
                Self.deadlines.asyncAfter(deadline: .now() + timeout) {
                    finish(.failure(.timeout))
                    state.withLock { $0.task }?.cancel()
                }
                // A cancellation that arrived before the task was stored found nothing to cancel.
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            state.withLock { $0.task }?.cancel()
        }
    }

    /// RFC 9700 §4.11: never follow a redirect; the 3xx itself is handed back to the caller.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Turns URLSession's completion arguments into a response, or an error that names no URL.
    private static func outcome(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<UpstreamResponse, UpstreamError> {
        if let error {
            return .failure(upstreamError(error))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(.transport("the answer was not HTTP"))
        }
        var headers: [(String, String)] = []
        for (name, value) in http.allHeaderFields {
            headers.append((String(describing: name), String(describing: value)))
        }
        return .success(UpstreamResponse(status: http.statusCode, headers: headers, body: data.map { [UInt8]($0) } ?? []))
    }

    /// Maps a URLSession error to ``UpstreamError``; the message is a fixed phrase, never the error's own text (which may hold the URL).
    private static func upstreamError(_ error: any Error) -> UpstreamError {
        guard let urlError = error as? URLError else { return .transport("request failed") }
        switch urlError.code {
        case .timedOut: return .timeout
        case .cannotConnectToHost: return .transport("connection refused")
        case .cannotFindHost, .dnsLookupFailed: return .transport("host not found")
        case .networkConnectionLost: return .transport("connection lost")
        case .notConnectedToInternet: return .transport("network unreachable")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .transport("TLS handshake failed")
        case .badServerResponse: return .transport("malformed HTTP response")
        case .cancelled: return .transport("cancelled")
        case .badURL, .unsupportedURL: return .transport("invalid URL")
        default: return .transport("URL error \(urlError.code.rawValue)")
        }
    }
}
