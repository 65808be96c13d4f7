/// Everything the broker core can refuse or fail with; the app maps each case to one HTTP status.
///
/// Messages are sentences for API clients: they name the check that failed and
/// never contain tokens, codes, secrets or a provider's raw body.
public enum BrokerError: Error, Sendable, Equatable {
    /// No provider has this name.
    case unknownProvider(String)
    /// The provider exists but lacks settings, named as the operator sets them (`WEIBO_CLIENT_ID`, `client_id`).
    case providerNotConfigured(String, missing: [String])
    /// The provider is configured but cannot be used yet, for `reason` (an OpenID provider whose discovery document is not loaded).
    case providerUnavailable(String, reason: String)
    /// The `return_to` URL is not on the allowlist or is malformed.
    case invalidReturnTo
    /// The callback's state is missing, unknown, expired, used, or bound to another browser.
    case invalidState
    /// The user (or the provider) refused the authorization.
    case accessDenied
    /// A provider call failed a check; `reason` names the check, e.g. `HTTP 400 with error invalid_grant (21325)`.
    case upstreamError(step: String, reason: String)
    /// A provider call ran past the outbound timeout.
    case upstreamTimeout(step: String)
    /// No such account.
    case notFound
    /// The account's access token has expired.
    case expired
    /// The account's tokens can no longer be used; the user must authorize again.
    case reauthorizationRequired
    /// The account's refresh kept failing for the whole give-up period and is no longer tried on reads;
    /// a forced refresh tries again, a new sign-in replaces the tokens.
    case refreshExhausted
    /// A refresh was asked for an account without a refresh token, or whose provider cannot refresh.
    case notRefreshable
    /// The caller is not allowed to make this request.
    case unauthorized
    /// The request is malformed; the message says how.
    case badRequest(String)
    /// The store could not be read or written.
    case storageUnavailable(String)
    /// A stored record is damaged (its sealed secrets do not open, or it does not parse): retrying cannot help.
    case recordDamaged(String)
    /// A provider and end user named more than one account, where the caller needed exactly one.
    case ambiguousAccount(provider: String)
    /// The account's credential cannot be handed on in a request header: `reason` says how it travels instead.
    case credentialNotForwardable(reason: String)
    /// A connect session token that was already used, has expired, or was never given.
    case connectSessionGone
    /// A reconnect session's sign-in came back as another account of the provider than the one it was for.
    case reconnectMismatch
    /// An API key without the scope, or outside the limits, that the call needs.
    case insufficientPermissions(String)
    /// The account's granted scopes, or a provider's grant, lack these scopes (RFC 6750 §3.1 `insufficient_scope`).
    case insufficientScope(missing: [String])
    /// The provider refused an entered credential at its verification request, answering `status`; nothing was stored.
    case credentialInvalid(provider: String, status: Int)
    /// A per-account setting (``AccountSetting``) is missing or has a value that may not stand in the provider's URLs.
    case invalidSetting(name: String, reason: String)
    /// The account's stored credential was refused by the provider at its last verification (status `invalid`);
    /// a verification that passes (`POST /account/verify` or the schedule) makes it usable again.
    case accountInvalid

    /// The snake_case error code of the API's error body.
    public var code: String {
        switch self {
        case .unknownProvider: "unknown_provider"
        case .providerNotConfigured: "provider_not_configured"
        case .providerUnavailable: "provider_unavailable"
        case .invalidReturnTo: "invalid_return_to"
        case .invalidState: "invalid_state"
        case .accessDenied: "access_denied"
        case .upstreamError: "upstream_error"
        case .upstreamTimeout: "upstream_timeout"
        case .notFound: "not_found"
        case .expired: "expired"
        case .reauthorizationRequired: "reauthorization_required"
        case .refreshExhausted: "refresh_exhausted"
        case .notRefreshable: "not_refreshable"
        case .unauthorized: "unauthorized"
        case .badRequest: "bad_request"
        case .storageUnavailable: "storage_unavailable"
        case .recordDamaged: "record_damaged"
        case .ambiguousAccount: "ambiguous_account"
        case .credentialNotForwardable: "credential_not_forwardable"
        case .connectSessionGone: "session_expired"
        case .reconnectMismatch: "account_mismatch"
        case .insufficientPermissions: "insufficient_permissions"
        case .insufficientScope: "insufficient_scope"
        case .credentialInvalid: "credential_invalid"
        case .invalidSetting: "invalid_setting"
        case .accountInvalid: "credential_invalid"
        }
    }

    /// A human sentence for the API's error body, free of secrets.
    public var message: String {
        switch self {
        case .unknownProvider(let name):
            "No provider named \(Self.quoted(name)) is known."
        case .providerNotConfigured(let name, let missing) where missing.isEmpty:
            "Provider \(Self.quoted(name)) is not available in this broker."
        case .providerNotConfigured(let name, let missing):
            "Provider \(Self.quoted(name)) is not configured: set \(missing.joined(separator: ", "))."
        case .providerUnavailable(let name, let reason):
            "Provider \(Self.quoted(name)) is unavailable for now (\(reason)); try again later."
        case .invalidReturnTo:
            "return_to must be an http(s) URL on an allowed origin."
        case .invalidState:
            "The authorization state is missing, unknown, expired, already used, or belongs to another browser; start again."
        case .accessDenied:
            "The authorization was denied at the provider."
        case .upstreamError(let step, let reason):
            "The provider's \(Self.stepName(step)) failed: \(reason)."
        case .upstreamTimeout(let step):
            "The provider did not answer the \(Self.stepName(step)) in time."
        case .notFound:
            "No such account."
        case .expired:
            "The account's access token has expired; authorize again."
        case .reauthorizationRequired:
            "The account's tokens were revoked or can no longer be refreshed; authorize again."
        case .refreshExhausted:
            "The account's refresh kept failing and the broker gave up; force a refresh (POST /account/refresh) or authorize again."
        case .notRefreshable:
            "The account has no refresh token, or its provider cannot refresh tokens; authorize again to renew it."
        case .unauthorized:
            "Missing or wrong credentials."
        case .badRequest(let detail):
            detail.hasSuffix(".") ? detail : detail + "."
        case .storageUnavailable:
            "The account store is unavailable; try again later."
        case .recordDamaged:
            "The stored record is damaged and cannot be read; retrying will not help. "
                + "An operator must restore it from a backup (the broker's log names it), or the account must be connected again."
        case .ambiguousAccount(let provider):
            "This end user has more than one \(Self.quoted(provider)) account; name one with Broker-Account (or id)."
        case .credentialNotForwardable(let reason):
            "The account's credential cannot be passed on in a header: \(reason)."
        case .connectSessionGone:
            "This connect session was already used or has expired; ask the app to start a new one."
        case .reconnectMismatch:
            "The sign-in was for another account at the provider than the one being reconnected; nothing was stored."
        case .insufficientPermissions(let detail):
            detail
        case .insufficientScope(let missing):
            "The grant lacks the scopes \(missing.joined(separator: " ")); authorize again asking for them."
        case .credentialInvalid(let provider, let status):
            "\(Self.quoted(provider)) refused the credential (its verification request answered HTTP \(status)); nothing was stored."
        case .invalidSetting(let name, let reason):
            "The setting \(Self.quoted(name)) \(reason)."
        case .accountInvalid:
            "The provider refused the account's credential when it was last verified; enter it again or verify it (POST /account/verify)."
        }
    }

    /// What a log line adds to ``message``: the store's own account of a storage failure
    /// (an operation and a path, never a secret), which the API answer keeps generic.
    public var logDetail: String? {
        switch self {
        case .storageUnavailable(let detail), .recordDamaged(let detail): return detail
        default: return nil
        }
    }

    /// `token_exchange` as `token exchange`, for sentences.
    private static func stepName(_ step: String) -> String {
        String(step.map { $0 == "_" ? " " : $0 })
    }

    /// A caller-supplied name in quotes when it is short and plain, or a placeholder when it is not.
    private static func quoted(_ name: String) -> String {
        let plain =
            name.utf8.count <= 64
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            }
        return plain ? "\"\(name)\"" : "(given)"
    }
}
