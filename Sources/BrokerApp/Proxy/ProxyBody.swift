import BrokerCore
import BrokerHTTP
import Synchronization

/// The caller's body on its way to the provider: kept whole when it is small enough to send twice, streamed otherwise.
struct ProxyBody: Sendable {
    /// The whole body (empty for none) when it was kept; nil when it streams.
    let kept: [UInt8]?
    /// What the client sends.
    let outbound: HTTPClientRequest.Body
    /// Bytes handed to the client so far.
    let sent: ByteCount

    /// Whether the call can be sent again (after a refresh, or a connection that could not be made).
    var isReplayable: Bool { kept != nil }

    /// Reads the body of `request` as far as deciding needs: a body of at most `limit` bytes is kept whole; a longer
    /// one streams through (with its `Content-Length` when it came with one), the bytes read to decide sent first.
    static func read(_ request: Request, keepingUpTo limit: Int) async throws(BrokerError) -> ProxyBody {
        guard let stream = request.bodyStream else { return kept(request.body) }
        var announced: Int?
        if case .length(let length) = request.head.framing {
            guard length > limit else { return kept(try await collect(stream, limit: limit)) }
            announced = length
        }
        var prefix: [[UInt8]] = []
        if announced == nil {
            // Chunked: read until the body ends or passes the limit.
            var total = 0
            while total <= limit {
                guard let piece = try await next(stream) else { return kept(prefix.flatMap { $0 }) }
                total += piece.count
                prefix.append(piece)
            }
        }
        let sent = ByteCount()
        let queued = Mutex(prefix)
        let source: @Sendable () async throws -> [UInt8]? = {
            var piece = queued.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            if piece == nil { piece = try await stream.next() }
            if let piece { sent.add(piece.count) }
            return piece
        }
        return ProxyBody(kept: nil, outbound: .stream(length: announced, source), sent: sent)
    }

    /// A body read whole, kept to be sent (and sent again) as it is.
    static func kept(_ bytes: [UInt8]) -> ProxyBody {
        let sent = ByteCount()
        sent.add(bytes.count)
        return ProxyBody(kept: bytes, outbound: .bytes(bytes), sent: sent)
    }

    private static func collect(_ stream: RequestBody, limit: Int) async throws(BrokerError) -> [UInt8] {
        do {
            return try await stream.collect(upTo: limit)
        } catch {
            throw .badRequest("The request body broke off before its end.")
        }
    }

    private static func next(_ stream: RequestBody) async throws(BrokerError) -> [UInt8]? {
        do {
            return try await stream.next()
        } catch {
            throw .badRequest("The request body broke off before its end.")
        }
    }
}

/// A byte count shared between a stream's source and whoever reports on it.
final class ByteCount: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ n: Int) { count.add(n, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
