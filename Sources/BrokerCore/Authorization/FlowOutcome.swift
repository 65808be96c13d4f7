import Foundation

/// What a back end can learn about one flow by its state: still pending, or how it ended.
///
/// Written when the flow starts (``Status/pending``) and replaced when its
/// callback completes or fails; kept until ``keepUntil`` (the flow's end plus
/// `BROKER_FLOW_TTL`). A pending outcome whose flow's ``expiresAt`` has passed
/// is reported as expired: nobody completed it in time. It holds no flow
/// secret (verifier, request token, nonce, binding), only what the back end
/// that started the flow may see.
public struct FlowOutcome: Sendable, Equatable {
    /// Where a flow stands, as `GET /flows/{state}` names it.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// Started, neither completed nor failed, and not yet expired.
        case pending
        /// The callback stored the account.
        case completed
        /// The callback failed; ``FlowOutcome/error`` is the code the browser was shown.
        case failed
        /// The flow's time ran out before a callback completed it.
        case expired
    }

    /// The flow's state (base64url): the key.
    public var state: String
    /// The provider the flow signs in to.
    public var provider: String
    /// As stored: ``Status/pending``, ``Status/completed`` or ``Status/failed``; see ``status(at:)`` for what is reported.
    public var status: Status
    /// The account the flow created or updated, when completed.
    public var accountID: AccountID?
    /// The end user the back end started the flow for, when it named one.
    public var endUserID: String?
    /// The error code the browser saw (`access_denied`, `upstream_error`, …), when failed.
    public var error: String?
    /// The tags the flow puts on its account (a connect session's or `POST /authorize`'s); empty when none.
    public var tags: [String: String]
    /// When the flow stops (or stopped) being usable.
    public var expiresAt: Date
    /// When the callback completed or failed the flow; nil while pending.
    public var endedAt: Date?
    /// When the outcome may be forgotten.
    public var keepUntil: Date

    /// Creates an outcome; optional fields default to absent.
    public init(
        state: String, provider: String, status: Status, accountID: AccountID? = nil, endUserID: String? = nil,
        tags: [String: String] = [:], error: String? = nil, expiresAt: Date, endedAt: Date? = nil, keepUntil: Date
    ) {
        self.state = state
        self.provider = provider
        self.status = status
        self.accountID = accountID
        self.endUserID = endUserID
        self.tags = tags
        self.error = error
        self.expiresAt = expiresAt
        self.endedAt = endedAt
        self.keepUntil = keepUntil
    }

    /// The pending outcome of a flow just started, kept until `retention` seconds after the flow expires.
    public static func pending(_ flow: PendingFlow, retention: Double) -> FlowOutcome {
        FlowOutcome(
            state: flow.state, provider: flow.provider, status: .pending, endUserID: endUserID(of: flow), tags: flow.tags,
            expiresAt: flow.expiresAt, keepUntil: flow.expiresAt.addingTimeInterval(retention))
    }

    /// The end user a flow was started for (`POST /authorize`'s `end_user_id`), copied into its outcome; nil when none was named.
    public static func endUserID(of flow: PendingFlow) -> String? {
        flow.endUser?.id
    }

    /// The status reported at `now`: a pending flow past its expiry is ``Status/expired``.
    public func status(at now: Date) -> Status {
        status == .pending && expiresAt <= now ? .expired : status
    }

    /// Whether the outcome may be forgotten at `now`.
    public func isStale(at now: Date) -> Bool {
        keepUntil <= now
    }
}
