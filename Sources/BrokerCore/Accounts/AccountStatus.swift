/// Whether an account's tokens can be used or the user must authorize again.
public enum AccountStatus: String, Sendable, CaseIterable {
    /// The tokens are believed valid (or refreshable).
    case active
    /// Refresh failed for good (for example `invalid_grant`); the user must authorize again.
    case reauthorizationRequired = "reauthorization_required"
}
