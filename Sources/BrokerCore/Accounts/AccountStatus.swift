/// Whether an account's tokens can be used, the user must authorize again, or the broker stopped refreshing it.
public enum AccountStatus: String, Sendable, CaseIterable {
    /// The tokens are believed valid (or refreshable).
    case active
    /// Refresh failed for good (for example `invalid_grant`); the user must authorize again.
    case reauthorizationRequired = "reauthorization_required"
    /// Refresh failed transiently without a break for longer than the give-up period (`BROKER_REFRESH_GIVE_UP`);
    /// the broker tries again only on a forced refresh, and a new sign-in makes the account active again.
    case refreshExhausted = "refresh_exhausted"
    /// The provider refused the entered credential (API key, basic, bearer) when the broker last verified it
    /// (`BROKER_VERIFY_INTERVAL` or `POST /account/verify`); it becomes active again when a verification passes.
    case invalid
}
