/// What a completed exchange hands back to be stored: the tokens and the provider user they belong to.
struct ExchangeCompletion: Sendable {
    /// The tokens the provider issued.
    var grant: TokenGrant
    /// The provider's user id, checked by ``ProviderUserID``.
    var uid: String
    /// The user's display name, when the provider gave one.
    var screenName: String?
    /// The account's per-account settings, already checked (an entered credential's form gives them); nil keeps the
    /// stored account's.
    var settings: [String: String]? = nil
}
