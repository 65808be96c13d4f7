import BrokerHTTP
import Foundation
import Synchronization

/// A resource server beside the fake authorization server, under ``FakeOAuth2Provider/apiPrefix``: what the broker's
/// API proxy (`/proxy/<path>`) calls. Every route wants a live Bearer token (RFC 6750 §2.1) and answers
/// `401` with `WWW-Authenticate: Bearer error="invalid_token"` (§3.1) otherwise, as a real API does after a revocation.
/// A token in `X-Fake-Access-Token` (Shopify's `X-Shopify-Access-Token` shape) counts as well, for a provider whose
/// `api_token_header` places it there.
///
/// - `<prefix>/echo…` (any method): the method, path, query and header fields it received and the body's size and
///   FNV-1a digest, read as it arrives; its answer also sets a cookie and names a hop-by-hop field, which a proxy must
///   not pass back.
/// - `GET <prefix>/bytes?n=N`: N bytes (byte i is `i % 251`), streamed in 64 KiB pieces.
/// - `GET <prefix>/events`: server-sent events, each one sent when the test pushes it (``FakeAPIEvents``).
/// - `GET <prefix>/limited`: `429` with `Retry-After: 3600`.
/// - `GET <prefix>/redirect`: `302` to another host.
///
/// Any route answers after `delay_ms` milliseconds (at most 10 s) when the query asks for it, as a real API takes its
/// time: what a benchmark of the proxy compares against when the provider is not on the same cores.
extension OAuth2Endpoints {
    /// The resource routes under `prefix` (which ends with `/`).
    static func addAPI(to router: inout Router, prefix: String, endpoints: OAuth2Endpoints, events: FakeAPIEvents) {
        let api: Router.Handler = .streaming({ await endpoints.api($0, prefix: prefix, events: events) }, maxBodyBytes: 1 << 30)
        for method in HTTPMethod.allCases { router.add(method, prefix: prefix, api) }
        // The API's root itself (`POST /proxy/` of an account whose API base is one endpoint, as an MCP server's is) echoes.
        router.add(.POST, prefix, api)
    }

    private func api(_ request: Request, prefix: String, events: FakeAPIEvents) async -> Response {
        let live = state.withLock { s -> Bool in
            s.ledger.apiCalls += 1
            guard s.owner(of: FakeWire.bearerToken(request) ?? request.headers["X-Fake-Access-Token"]) != nil else {
                s.ledger.apiRefusals += 1
                return false
            }
            return true
        }
        guard live else {
            return FakeWire.answer(
                .unauthorized, "application/json", #"{"message":"Bad credentials"}"#,
                extra: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
        }
        if let delay = request.query("delay_ms").flatMap(Int.init), delay > 0 {
            try? await Task.sleep(for: .milliseconds(min(delay, 10_000)))
        }
        let name = String(request.path.dropFirst(prefix.count))
        switch name {
        case "bytes":
            return Self.bytes(count: Int(request.query("n") ?? "0") ?? 0)
        case "events":
            return events.response()
        case "limited":
            return FakeWire.answer(
                HTTPStatus(429, "Too Many Requests"), "application/json", #"{"message":"rate limited"}"#, extra: [("Retry-After", "3600")])
        case "redirect":
            return FakeWire.answer(.found, "text/plain", "moved", extra: [("Location", "http://127.0.0.2:9/elsewhere")])
        default:
            return await Self.echo(request)
        }
    }

    /// What the request looked like on arrival, as JSON.
    private static func echo(_ request: Request) async -> Response {
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        var count = 0
        func take(_ piece: [UInt8]) {
            count += piece.count
            for b in piece { digest = (digest ^ UInt64(b)) &* 0x100_0000_01b3 }
        }
        if let body = request.bodyStream {
            do {
                while let piece = try await body.next() { take(piece) }
            } catch {
                return FakeWire.answer(.badRequest, "application/json", #"{"message":"the body broke off"}"#)
            }
        } else {
            take(request.body)
        }
        var json = #"{"method":"# + JSONString.quote(request.method.rawValue)
        json += #","path":"# + JSONString.quote(request.path)
        json += #","query":"# + (request.head.query.map(JSONString.quote) ?? "null")
        json += #","headers":["#
        json += request.headers.fields.map { "[\(JSONString.quote($0.name)),\(JSONString.quote($0.value))]" }.joined(separator: ",")
        json += #"],"bytes":\#(count),"fnv":"\#(digest)"}"#
        return FakeWire.answer(
            .ok, "application/json", json,
            extra: [("Set-Cookie", "session=fake; Path=/"), ("Connection", "X-Hop"), ("X-Hop", "secret-hop"), ("X-API", "fake")])
    }

    /// `count` bytes of `i % 251`, in 64 KiB pieces, never held whole.
    private static func bytes(count: Int) -> Response {
        let sent = Mutex(0)
        let total = max(0, count)
        return Response(
            status: .ok, headers: HTTPHeaders([("Content-Type", "application/octet-stream")]),
            stream: ResponseStream(
                length: total,
                next: {
                    sent.withLock { offset -> [UInt8]? in
                        guard offset < total else { return nil }
                        let n = min(65536, total - offset)
                        defer { offset += n }
                        return (offset..<(offset + n)).map { UInt8($0 % 251) }
                    }
                }))
    }
}

/// The events a fake API's `/events` route sends, each when the test pushes it; nil ends the stream.
public final class FakeAPIEvents: Sendable {
    private let state = Mutex<(queue: [String?], waiter: CheckedContinuation<String?, Never>?)>(([], nil))

    /// Starts with nothing pushed.
    public init() {}

    /// Sends `data` as one event (`data: …` and a blank line), or ends the stream with nil.
    public func push(_ data: String?) {
        let waiter = state.withLock { s -> CheckedContinuation<String?, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.queue.append(data)
            return nil
        }
        waiter?.resume(returning: data)
    }

    private func next() async -> String? {
        await withCheckedContinuation { c in
            let ready = state.withLock { s -> String?? in
                if !s.queue.isEmpty { return .some(s.queue.removeFirst()) }
                s.waiter = c
                return .none
            }
            if case .some(let data) = ready { c.resume(returning: data) }
        }
    }

    /// A `text/event-stream` answer that sends each pushed event as it comes.
    func response() -> Response {
        Response(
            status: .ok, headers: HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]),
            stream: ResponseStream(next: { [self] in
                guard let data = await next() else { return nil }
                return Array("data: \(data)\n\n".utf8)
            }))
    }
}
