import Foundation

/// What one provider kind does to turn a browser's approval into tokens: begin, complete, and where it can, refresh and revoke.
///
/// One implementation per ``ProviderKind``, each in its own folder with its
/// clients, wire formats and response checks; ``ExchangeRegistry`` maps a kind
/// to its exchange. The services around it own what every kind shares: state,
/// browser binding, the pending flow, storage and the refresh schedule.
protocol ProviderExchange: Sendable {
    /// What this provider can do beyond begin and complete; callers ask before they refresh or revoke.
    var capabilities: ExchangeCapabilities { get }

    /// Prepares the authorize step for a new flow whose state is `state`: the URL to send the browser to and what the flow must keep.
    ///
    /// `binding` is the flow's binding, ``AuthorizationService/apiBinding`` for a
    /// flow driven by a back end. May call the provider (temporary credentials,
    /// a request token); stores nothing.
    func begin(state: String, binding: String) async throws(BrokerError) -> ExchangeStart

    /// Checks the raw callback query against `flow` and trades it for tokens and the user they belong to.
    ///
    /// `flow` was taken, is unexpired and its binding matched. Every provider
    /// check happens here; a refusal found in the query makes no provider call.
    func complete(callback query: [String: String], flow: PendingFlow) async throws(BrokerError) -> ExchangeCompletion

    /// Trades `refreshToken` for new tokens; only called when ``capabilities`` holds ``ExchangeCapabilities/refresh``.
    ///
    /// On failure the error comes with the provider's `Retry-After`, when it sent one.
    func refresh(refreshToken: Secret) async throws(RefreshFailure) -> TokenGrant

    /// Revokes `account`'s grant at the provider; only called when ``capabilities`` holds ``ExchangeCapabilities/revoke``.
    func revoke(_ account: Account) async throws(BrokerError)

    /// The user an access token brought from another system belongs to, asked of the provider's user endpoint.
    func importedUser(accessToken: Secret) async throws(BrokerError) -> (uid: String, screenName: String?)

    /// Asks the provider for a device code and a user code (RFC 8628 §3.1) for `scopes` (nil: the configured ones).
    func authorizeDevice(scopes: [String]?) async throws(BrokerError) -> DeviceAuthorization

    /// Polls the token endpoint once with `deviceCode` (RFC 8628 §3.4): still pending, slow down, or the tokens and
    /// their user; a refusal (`access_denied`, `expired_token`, any other error) is thrown.
    func pollDevice(deviceCode: Secret) async throws(BrokerError) -> DevicePoll
}

extension ProviderExchange {
    /// A kind without a refresh grant is never asked for one; should it be, it refuses without calling anyone.
    func refresh(refreshToken: Secret) async throws(RefreshFailure) -> TokenGrant {
        throw RefreshFailure(.badRequest("This provider has no refresh grant"))
    }

    /// A kind that cannot name a token's user without a sign-in refuses: the import must give the uid.
    func importedUser(accessToken: Secret) async throws(BrokerError) -> (uid: String, screenName: String?) {
        throw .badRequest("This provider cannot name the user of an imported token; give uid")
    }

    /// A kind without revocation is never asked for one; should it be, it refuses without calling anyone.
    func revoke(_ account: Account) async throws(BrokerError) {
        throw .badRequest("This provider has no revocation")
    }

    /// A kind without the device grant refuses without calling anyone.
    func authorizeDevice(scopes: [String]?) async throws(BrokerError) -> DeviceAuthorization {
        throw .badRequest("This provider offers no device sign-in")
    }

    /// A kind without the device grant refuses without calling anyone.
    func pollDevice(deviceCode: Secret) async throws(BrokerError) -> DevicePoll {
        throw .badRequest("This provider offers no device sign-in")
    }
}
