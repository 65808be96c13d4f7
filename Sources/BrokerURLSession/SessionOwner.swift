import BrokerCore
import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Owns the URLSession of a ``URLSessionUpstreamClient``, reads each answer into a bounded buffer, refuses redirects,
/// and invalidates the session when released.
///
/// Answers arrive through delegate callbacks rather than a completion handler, so a body past the
/// cap is cut off as it streams in instead of being gathered whole first. The delegate receives
/// bytes after content decoding (RFC 9110 §8.4), so the cap also bounds a small compressed answer
/// that inflates to a large one.
final class SessionOwner: NSObject, URLSessionDataDelegate, Sendable {
    /// One request in flight: whom to answer, how much it may read, what to do past that, and what has arrived so far.
    private struct Transfer {
        let continuation: CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>
        let limit: Int
        /// Past the cap, answer with the status and the body cut at the cap rather than with ``UpstreamError/tooLarge(limit:)``.
        let truncates: Bool
        var body: [UInt8] = []
    }

    // `nonisolated(unsafe)`: written once, under `lock`, on first use; URLSession itself is thread-safe.
    private nonisolated(unsafe) var storedSession: URLSession?
    private let configuration: URLSessionConfiguration
    private let lock = Mutex<Void>(())
    /// The requests in flight by task identifier; whoever removes an entry (answer, deadline, cap) resumes its caller, once.
    private let transfers = Mutex<[Int: Transfer]>([:])

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
            let created = URLSession(configuration: configuration, delegate: self, delegateQueue: InlineDelegateQueue())
            storedSession = created
            return created
        }
    }

    /// Lets running tasks finish, then releases the session and its delegate reference.
    deinit {
        storedSession?.finishTasksAndInvalidate()
    }

    /// Runs `request`, failing with ``UpstreamError/timeout`` once `timeout` seconds pass and, once the body passes
    /// `limit` bytes, with ``UpstreamError/tooLarge(limit:)`` or (`truncates`) with the answer as it stands, its body
    /// cut at `limit`; a cancelled caller is answered at once.
    ///
    /// The deadline is enforced here rather than left to URLSession alone:
    /// FoundationNetworking on Linux rounds its timeouts down to whole seconds
    /// (0.5 s would become "no time at all").
    func perform(
        _ request: URLRequest, timeout: Double, limit: Int, truncates: Bool = false
    ) async -> Result<UpstreamResponse, UpstreamError> {
        let started = Mutex<Int?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<UpstreamResponse, UpstreamError>, Never>) in
                let task = session.dataTask(with: request)
                let id = task.taskIdentifier
                // Registered before `resume`, so the first callback finds it.
                transfers.withLock { $0[id] = Transfer(continuation: continuation, limit: limit, truncates: truncates) }
                started.withLock { $0 = id }
                task.resume()
                // A serial queue of our own: Dispatch's global queue may be busy with blocking work.
                Self.deadlines.asyncAfter(deadline: .now() + timeout) {
                    self.finish(id) { _ in .failure(.timeout) }
                }
                // A cancellation that arrived before the transfer was registered found nothing to end.
                if Task.isCancelled { Self.abandon(id, owner: self) }
            }
        } onCancel: {
            // Not here: this runs under the cancelled task's status lock; ending the transfer from our own queue
            // never waits on it.
            if let id = started.withLock({ $0 }) { Self.abandon(id, owner: self) }
        }
    }

    /// RFC 9110 §8.6: a declared length above the cap is refused before any of the body is read (a cut answer reads up to it).
    ///
    /// FoundationNetworking ignores the disposition handed back; the transfer ends here and the rest of the body is dropped.
    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let id = dataTask.taskIdentifier
        let declared = response.expectedContentLength
        let refused = transfers.withLock { table -> Int? in
            guard let limit = table[id]?.limit else { return nil }
            // A cut answer reads up to the cap, then stops.
            if declared > Int64(limit) && table[id]?.truncates != true { return limit }
            // Room for an honest declared body at once (never more than the cap), so the buffer does not grow by doubling.
            if declared > 0 { table[id]?.body.reserveCapacity(Int(min(declared, Int64(limit)))) }
            return nil
        }
        guard let refused else {
            completionHandler(.allow)
            return
        }
        finish(id) { _ in .failure(.tooLarge(limit: refused)) }
        Self.deadlines.async { completionHandler(.cancel) }
    }

    /// Appends a piece of the (decoded) body, or cuts the transfer off once it would pass the cap: as refused,
    /// or as answered with the body read so far filled up to the cap.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let refused = transfers.withLock { table -> Int? in
            guard let limit = table[id]?.limit, let count = table[id]?.body.count else { return nil }
            if data.count > limit - count {
                if table[id]?.truncates == true { table[id]?.body.append(contentsOf: data.prefix(limit - count)) }
                return limit
            }
            // Mutated in place through the optional chain: the buffer is never copied.
            table[id]?.body.append(contentsOf: data)
            return nil
        }
        guard let refused else { return }
        finish(id) { transfer in
            guard transfer.truncates else { return .failure(.tooLarge(limit: refused)) }
            // The rest of the body is dropped as it arrives: its transfer is gone.
            return Self.outcome(body: transfer.body, response: dataTask.response, error: nil)
        }
    }

    /// Answers the caller of transfer `id` as cancelled, from a queue of our own.
    ///
    /// The URLSession task itself is never cancelled: FoundationNetworking traps the process when a task is
    /// cancelled while it is being unregistered (its answer arriving at that moment). Once its transfer is gone
    /// the task's further pieces are dropped as they arrive, and the session's own timeout (the deadline rounded
    /// up, plus one second) ends a task that would run on.
    private static func abandon(_ id: Int, owner: SessionOwner) {
        deadlines.async { owner.finish(id) { _ in .failure(.transport(.cancelled, "cancelled")) } }
    }

    /// Hands the caller the answer, or an error that names no URL, when the task ends; a transfer already finished is left alone.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(task.taskIdentifier) { Self.outcome(body: $0.body, response: task.response, error: error) }
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

    /// Hands a 401 back as the answer instead of answering its challenge: the broker sends no credentials a provider asks for this way.
    ///
    /// RFC 9110 §11.6.1: a token endpoint may answer 401 with `WWW-Authenticate` (RFC 6749 §5.2).
    /// FoundationNetworking asks this question only once the whole answer has arrived, so the body
    /// gathered so far is complete; without an answer here it would wait for credentials forever.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        finish(task.taskIdentifier) { Self.outcome(body: $0.body, response: task.response, error: nil) }
        // Answered from our own queue: cancelling the challenge cancels the task, which waits on URLSession's queue.
        Self.deadlines.async { completionHandler(.cancelAuthenticationChallenge, nil) }
    }

    /// Removes transfer `id` and resumes its caller with `result` of it; does nothing when another outcome came first.
    private func finish(_ id: Int, _ result: (Transfer) -> Result<UpstreamResponse, UpstreamError>) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: id) }) else { return }
        transfer.continuation.resume(returning: result(transfer))
    }

    /// Turns what the task ended with into a response, or an error that names no URL.
    private static func outcome(body: [UInt8], response: URLResponse?, error: (any Error)?) -> Result<UpstreamResponse, UpstreamError> {
        if let error {
            return .failure(upstreamError(error))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(.transport(.badResponse, "the answer was not HTTP"))
        }
        var headers: [(String, String)] = []
        for (name, value) in http.allHeaderFields {
            headers.append((String(describing: name), String(describing: value)))
        }
        return .success(UpstreamResponse(status: http.statusCode, headers: headers, body: body))
    }

    /// Maps a URLSession error to ``UpstreamError``; the message is a fixed phrase, never the error's own text (which may hold the URL).
    private static func upstreamError(_ error: any Error) -> UpstreamError {
        guard let urlError = error as? URLError else { return .transport(.connectionLost, "request failed") }
        switch urlError.code {
        case .timedOut: return .timeout
        case .cannotConnectToHost: return .transport(.connectRefused, "connection refused")
        case .cannotFindHost, .dnsLookupFailed: return .transport(.hostNotFound, "host not found")
        case .networkConnectionLost: return .transport(.connectionLost, "connection lost")
        case .notConnectedToInternet: return .transport(.connectRefused, "network unreachable")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            return .transport(.tlsHandshake, "TLS handshake failed")
        case .cancelled: return .transport(.cancelled, "cancelled")
        // The URL was checked before the request went out, so libcurl reports these codes for an
        // answer that is not HTTP/1.x at all: a status line that is not RFC 9112 §4's, or bare bytes.
        case .badServerResponse, .badURL, .unsupportedURL: return .transport(.badResponse, "malformed HTTP response")
        default: return .transport(.connectionLost, "URL error \(urlError.code.rawValue)")
        }
    }
}

/// The delegate queue of ``SessionOwner``: runs each delegate call at once, on the thread that makes it.
///
/// FoundationNetworking hands every decoded piece of a body to the delegate queue
/// as an operation and goes on reading; on an ordinary queue a compressed answer
/// that inflates a thousandfold piles up there faster than the delegate can count
/// it, so memory grows by hundreds of MiB before the cap is noticed. Run inline,
/// each piece is counted (or dropped, past the cap) before libcurl produces the
/// next, and memory stays within the cap plus one piece. The delegate methods
/// only touch a Mutex-guarded table and resume continuations, so running them on
/// URLSession's own queue blocks nothing.
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: no state of its own beyond OperationQueue's, which is thread-safe.

    /// Runs `block` now, on the calling thread.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        block()
    }
}
