import BrokerCore
import Foundation

@testable import BrokerApp

/// The broker's real outbound client, with every `https://host/path?query` sent to `http://127.0.0.1:port/host/path?query`.
///
/// A preset keeps its real endpoints and the fake provider still sees which
/// host each call was meant for, so a test proves both the preset's URLs and
/// its wire format without a providers file.
struct HostRewritingUpstream: UpstreamClient {
    let port: Int
    let inner = EpollUpstreamClient(timeout: 30)

    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        var rewritten = request
        rewritten.url = Self.rewrite(request.url, port: port)
        return try await inner.send(rewritten)
    }

    /// `url` as a path on the fake: scheme and host become the first path segment.
    static func rewrite(_ url: String, port: Int) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        return "http://127.0.0.1:\(port)/" + url[schemeEnd.upperBound...]
    }
}
