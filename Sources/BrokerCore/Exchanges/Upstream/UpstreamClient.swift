/// The outbound HTTP call to providers, so exchanges can be tested against in-process fakes.
public protocol UpstreamClient: Sendable {
    /// Sends `request` and returns whatever HTTP response arrives (any status); throws only when none does.
    ///
    /// Implementations follow no redirects, keep no cookies and cache nothing.
    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse
}
