import Foundation

/// Where to send the browser to start an authorization, and the flow it started.
public struct AuthorizationStart: Sendable {
    /// The provider's authorize URL with every parameter; the route answers 302 to it.
    public var authorizeURL: String
    /// The flow's state (≥ 128 random bits), single use.
    public var state: String
    /// When the flow stops being usable; a flow cookie's Max-Age should not outlive it.
    public var expiresAt: Date

    /// Creates a start record.
    public init(authorizeURL: String, state: String, expiresAt: Date) {
        self.authorizeURL = authorizeURL
        self.state = state
        self.expiresAt = expiresAt
    }
}
