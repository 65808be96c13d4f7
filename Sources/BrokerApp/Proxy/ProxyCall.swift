import BrokerCore
import BrokerHTTP
import Synchronization

/// What one proxied call did, for its audit entry and metrics: recorded once, when its answer ends.
struct ProxyCall: Sendable {
    let request: Request
    /// The API key's name.
    let caller: String
    let started: ContinuousClock.Instant
    /// The account id as named, once resolved.
    var accountID: String?
    /// What the audit entry names of the account, once it was read.
    var read: ReadAccount?
    /// The provider's API host, once known.
    var host: String?
    /// Seconds the provider took to answer the last try.
    var upstreamSeconds: Double?
    /// Bytes of the caller's body sent to the provider.
    var sent: ByteCount?

    /// The account's id, provider and end user: what the call keeps of the account it read (not the whole account,
    /// which it would copy into the relay's record).
    struct ReadAccount: Sendable {
        let id: String
        let provider: String
        let endUser: String?
    }

    /// The path under the API base (from its `/`), without the query: what is called and what the audit trail names.
    let path: String

    init(request: Request, caller: String, started: ContinuousClock.Instant) {
        self.request = request
        self.caller = caller
        self.started = started
        path = ProxyHandler.path(of: request)
    }
}

extension ProxyHandler {
    /// The provider's answer, relayed: its status, its fields but the ones that must not come back, and its body as it
    /// arrives. The call is recorded when the body ends, breaks off, or is given up.
    func relay(_ answer: HTTPClientResponse, call: ProxyCall, credential: ProxyCredential, refreshed: Bool) -> Response {
        guard let status = HTTPStatus(code: answer.status) else {
            answer.body.cancel()
            return finish(call, failing: .upstreamError(step: "proxy", reason: "the provider answered with status \(answer.status)"))
        }
        let fields = ProxyHeaders.response(answer.head.headers.fields, secrets: credential.secretValues)
        var headers = HTTPHeaders(fields)
        if let id = call.read?.id { headers.add(name: "Broker-Account", value: id) }
        let length: Int?
        switch answer.head.framing {
        case .length(let n): length = n
        case .none: length = 0
        case .chunked, .untilClose: length = nil
        }
        // A HEAD call's answer, a 204 or a 304 has no body: the server gives it up at once, which is its end.
        let bodiless = call.request.method == .HEAD || length == 0 || status.code == 204 || status.code == 304
        // A small answer that arrived whole with its head goes back in one piece: the server writes head and body in
        // one send, and no pump runs for it. Larger or unfinished answers stream as they arrive.
        if !bodiless, let length, length <= Self.wholeAnswerLimit, let whole = answer.body.wholeIfArrived(),
            whole.count == length
        {
            record(call, status: answer.status, received: whole.count, outcome: "ok")
            return Response(status: status, headers: headers, body: whole)
        }
        let relay = ProxyRelay(
            answer.body, bodiless: bodiless,
            record: { received, outcome in
                record(call, status: answer.status, received: received, outcome: outcome)
            })
        return Response(
            status: status, headers: headers,
            stream: ResponseStream(length: length, next: { try await relay.next() }, cancel: { relay.cancel() }))
    }

    /// The largest answer body relayed in one piece when it is already whole.
    static let wholeAnswerLimit = 64 * 1024

    /// Records a call that got no answer to relay, and answers the caller with `error`.
    func finish(_ call: ProxyCall, failing error: BrokerError) -> Response {
        record(call, status: nil, received: 0, outcome: error.code)
        return error.response
    }

    /// The call's audit entry (no token, no body, no query) and its metrics.
    private func record(_ call: ProxyCall, status: Int?, received: Int, outcome: String) {
        let provider = call.read?.provider ?? call.accountID.map(AuditEvent.provider(ofAccountID:))
        if let provider, registry.knows(provider) {
            metrics.callFinished(provider: provider, status: status, seconds: call.upstreamSeconds)
        }
        guard let id = call.accountID else { return }
        // Written straight into the lines (AuditTrail.recordProxyCall), as an AuditEvent with these details would be.
        audit.recordProxyCall(
            AuditTrail.ProxyCallEntry(
                account: call.read?.id ?? id, provider: provider, endUser: call.read?.endUser, caller: call.caller,
                requestID: call.request.id, outcome: outcome, method: call.request.method.rawValue, host: call.host,
                path: call.path, status: status, bytesSent: call.sent?.value ?? 0, bytesReceived: received,
                durationMS: Self.seconds(since: call.started) * 1000))
    }
}

/// Pulls a relayed answer's body for the server, counting it, and records the call once: at the end, at a break, or
/// when the server gives the rest up.
final class ProxyRelay: @unchecked Sendable {
    // @unchecked: the iterator is used by one pump at a time (the server asks for a piece only after the last one was
    // sent); `done` guards the single record across that pump and a cancel from the connection.
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private let body: HTTPClientResponse.Body
    private let received = ByteCount()
    private let done = Atomic<Bool>(false)
    private let record: @Sendable (Int, String) -> Void
    private let bodiless: Bool

    init(
        _ body: HTTPClientResponse.Body, bodiless: Bool,
        record: @escaping @Sendable (_ received: Int, _ outcome: String) -> Void
    ) {
        self.body = body
        self.bodiless = bodiless
        iterator = body.makeAsyncIterator()
        self.record = record
    }

    func next() async throws -> [UInt8]? {
        do {
            guard let piece = try await iterator.next() else {
                finish("ok")
                return nil
            }
            received.add(piece.count)
            return piece
        } catch {
            // The provider's answer broke off: the caller's breaks off too (the server closes without its end).
            finish("broken: " + error.code)
            throw error
        }
    }

    func cancel() {
        body.cancel()
        // Given up early: the caller left (or its connection failed) before the whole answer was sent.
        finish(bodiless ? "ok" : "cancelled")
    }

    private func finish(_ outcome: String) {
        guard done.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        record(received.value, outcome)
    }
}
