/// What happened to an account or a sign-in, as the `type` of a webhook event names it.
public enum BrokerEventType: String, Sendable, CaseIterable, Codable {
    /// An authorization stored an account that did not exist before.
    case accountConnected = "account.connected"
    /// The same user authorized the same provider again; the stored account was replaced.
    case accountReconnected = "account.reconnected"
    /// A refresh failed for a transient reason, and the token expires before the next try.
    case accountRefreshFailed = "account.refresh_failed"
    /// The provider refused the refresh token; the user must authorize again.
    case accountReauthorizationRequired = "account.reauthorization_required"
    /// `PATCH /account` changed the account's end user or tags, without a new sign-in.
    case accountUpdated = "account.updated"
    /// A refresh worked again after transient failures that the refresh backoff recorded (or after the account was
    /// `refresh_exhausted`), or a verification passed for an `invalid` account.
    case accountRecovered = "account.recovered"
    /// Refresh kept failing transiently for the whole give-up period; the account is now `refresh_exhausted`.
    case accountRefreshExhausted = "account.refresh_exhausted"
    /// The provider refused the account's entered credential at a verification (scheduled or `POST /account/verify`);
    /// the account is now `invalid`.
    case accountInvalid = "account.invalid"
    /// The account was deleted, after a revocation at the provider that worked or not.
    case accountDeleted = "account.deleted"
    /// A sign-in whose flow was found failed at the callback (denied, provider error, binding, storage).
    case flowFailed = "flow.failed"
    /// A sign-in finished with an account stored; `data.state` names the flow.
    case flowCompleted = "flow.completed"
}
