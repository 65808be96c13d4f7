import BrokerCore
import Foundation

/// An ``UpstreamClient`` that counts each failed call by cause and, when given a logger, logs it.
///
/// The log line names the cause, the origin called (scheme, host and port: never a path, query string or
/// user information) and the client's reason, which for `tls_certificate` is OpenSSL's (`certificate has expired`).
/// Request headers and bodies, where tokens and secrets travel, are never looked at.
struct MeteredUpstreamClient: UpstreamClient {
    /// The client that makes the calls.
    let inner: any UpstreamClient
    /// Where failures are counted.
    let errors: UpstreamErrorMetrics
    /// What the calls are for.
    let target: UpstreamErrorMetrics.Target
    /// Where each failure is logged; nil logs nothing (webhook deliveries log their own attempts).
    let logger: BrokerLogger?

    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        do {
            return try await inner.send(request)
        } catch {
            errors.record(error.cause, target: target)
            logger?.log(
                .warning, "\(target.rawValue) call failed",
                [
                    ("cause", .string(error.cause.rawValue)), ("origin", .string(Self.origin(of: request.url))),
                    ("reason", .string(error.description)),
                ])
            throw error
        }
    }

    /// `scheme://host[:port]` of `url`, or `(invalid URL)`.
    static func origin(of url: String) -> String {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme, let host = parts.host, !host.isEmpty else {
            return "(invalid URL)"
        }
        let port = parts.port.map { ":\($0)" } ?? ""
        // RFC 3986 §3.2.2: an IPv6 literal is written in brackets (which Foundation may already have kept).
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)\(port)"
    }
}
