/// How a provider adds scopes to a grant it already made: data in its preset, read when a step-up flow starts
/// (`GET /account?scopes=` answering `insufficient_scope`).
///
/// Whatever the mode, the step-up flow asks for the union of the granted scopes and the missing ones, which every
/// mode accepts, and a grant lacking any of them fails the flow; the mode says what the person sees and why.
public struct ScopeUpgrade: Sendable {
    /// What the provider does when asked for more scopes.
    public enum Mode: String, Sendable {
        /// The person consents again to the whole list (GitHub: the new token carries what was asked).
        case reconsent
        /// The provider asks only for the scopes not yet consented to and returns the whole set
        /// (Microsoft identity platform's incremental consent; Slack's `user_scope`).
        case additive
        /// Incremental authorization with a parameter that keeps the earlier grants (Google `include_granted_scopes=true`).
        case incremental
    }

    /// The mode; ``Mode/reconsent`` unless the preset says otherwise.
    public var mode: Mode
    /// Parameters a step-up flow's authorization request adds to the provider's own.
    public var parameters: [(String, String)]

    /// An upgrade in `mode` adding `parameters`.
    public init(mode: Mode = .reconsent, parameters: [(String, String)] = []) {
        self.mode = mode
        self.parameters = parameters
    }
}
