/// The on-disk shape of a pending flow, version 1.
package struct PendingFlowJSON: Codable, Equatable {
    /// The record format; 1 for this layout.
    package var version: Int
    /// The flow key.
    package var state: String
    /// The provider key.
    package var provider: String
    /// What binds the flow to one browser or caller.
    package var binding: String
    /// `code_verifier` (PKCE), plaintext.
    package var codeVerifier: String?
    /// `request_token`.
    package var requestToken: String?
    /// `request_token_secret`, plaintext.
    package var requestTokenSecret: String?
    /// `return_to`.
    package var returnTo: String?
    /// `nonce` (OpenID Connect), plaintext or sealed; absent in records of earlier versions and in other flows.
    package var nonce: String? = nil
    /// `end_user_id`, `end_user_email`, `end_user_name`: plaintext (not secrets); absent in records of earlier versions.
    package var endUserID: String? = nil
    package var endUserEmail: String? = nil
    package var endUserName: String? = nil
    /// `tags`, an object of strings; absent when none and in records of earlier versions.
    package var tags: [String: String]? = nil
    /// `connect`: the connect session the record is or came from; absent for other flows and in records of earlier versions.
    package var connect: ConnectJSON? = nil
    /// `scopes`: the scopes the flow asked for itself; absent when it asked for the provider's, and in earlier records.
    package var scopes: [String]? = nil
    /// `step_up`: the account a step-up flow upgrades; absent otherwise and in earlier records.
    package var stepUp: String? = nil
    /// `device`: the device sign-in polled for; absent for other flows and in records of earlier versions.
    package var device: DeviceJSON? = nil
    /// `settings`: the provider's per-account settings, an object of strings; absent when none and in records of earlier versions.
    package var settings: [String: String]? = nil
    /// `created_at`, RFC 3339.
    package var createdAt: String
    /// `expires_at`, RFC 3339.
    package var expiresAt: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case version, state, provider, binding
        case codeVerifier = "code_verifier"
        case requestToken = "request_token"
        case requestTokenSecret = "request_token_secret"
        case returnTo = "return_to"
        case nonce
        case endUserID = "end_user_id"
        case endUserEmail = "end_user_email"
        case endUserName = "end_user_name"
        case tags, connect, scopes, device, settings
        case stepUp = "step_up"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}

/// The stored shape of a ``ConnectContext``.
package struct ConnectJSON: Codable, Equatable {
    /// `stage`: `session`, `picker` or `flow`.
    package var stage: String
    /// `origin`.
    package var origin: String
    /// `providers`, absent when every provider is allowed.
    package var providers: [String]?
    /// `account`, the account a reconnect renews.
    package var account: String?
    /// `scopes`, absent when the provider's own are asked for.
    package var scopes: [String]?

    /// The stored shape of `context`.
    package init(_ context: ConnectContext) {
        stage = context.stage.rawValue
        origin = context.origin
        providers = context.allowedProviders.isEmpty ? nil : context.allowedProviders
        account = context.reconnectAccountID
        scopes = context.scopes
    }

    /// The context, or nil when the stage is unknown.
    package var context: ConnectContext? {
        guard let stage = ConnectContext.Stage(rawValue: stage) else { return nil }
        return ConnectContext(
            stage: stage, origin: origin, allowedProviders: providers ?? [], reconnectAccountID: account, scopes: scopes)
    }
}

/// The stored shape of a ``DeviceContext``.
package struct DeviceJSON: Codable, Equatable {
    /// `device_code`, plaintext or sealed.
    package var deviceCode: String
    /// `interval`, seconds between polls.
    package var interval: Int
    /// `next_poll_at`, RFC 3339.
    package var nextPollAt: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case interval
        case nextPollAt = "next_poll_at"
    }

    /// A stored device context.
    package init(deviceCode: String, interval: Int, nextPollAt: String) {
        self.deviceCode = deviceCode
        self.interval = interval
        self.nextPollAt = nextPollAt
    }
}
