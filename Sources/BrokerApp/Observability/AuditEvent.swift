import BrokerCore

/// One entry of the audit trail: who was handed which account's token, or deleted, revoked or connected it,
/// or wrote a backup of every account.
///
/// Holds ids, names and outcome codes only; never a token, a code or a secret.
struct AuditEvent: Sendable {
    /// What happened.
    enum Kind: String, Sendable {
        /// `GET /account` answered with the account's token.
        case tokenRead = "token_read"
        /// `GET /auth` (forward authentication) handed the token to a gateway in a header (or, after authorising
        /// the caller, failed to).
        case tokenForwarded = "token_forwarded"
        /// `/proxy/…` called the provider's API with the account's credential (details: method, host, path without
        /// the query, status, bytes each way, milliseconds), or, after authorising the caller, failed to.
        case proxyCall = "proxy_call"
        /// `POST /account/refresh` refreshed the token and answered with it (or failed to).
        case tokenRefreshed = "token_refreshed"
        /// `GET /app-token` answered with a client credentials token.
        case appTokenRead = "app_token_read"
        /// The account was deleted (`DELETE /account` or the connect page).
        case accountDeleted = "account_deleted"
        /// The broker asked the provider to revoke the account's tokens before deleting it.
        case accountRevoked = "account_revoked"
        /// A sign-in finished and stored the account.
        case flowCompleted = "flow_completed"
        /// `POST /backup` wrote a snapshot of every account (or failed to).
        case backupWritten = "backup_written"
        /// `POST /accounts` stored an entered credential (API key, basic, bearer), or was refused after authorising.
        case credentialStored = "credential_stored"
        /// `POST /account/verify` ran the provider's verification request with the account's credential.
        case credentialVerified = "credential_verified"
    }

    /// What happened.
    var kind: Kind
    /// The account's id (`provider:uid`); nil for app tokens.
    var account: String?
    /// The provider's name; nil for events about no one provider (a backup).
    var provider: String?
    /// The back end's user the account belongs to, where one is known (see ``AuditEvent/endUser(of:)``).
    var endUser: String?
    /// The API key's name, or `browser` for a session cookie.
    var caller: String
    /// The request's id (``BrokerHTTP/RequestID``).
    var requestID: String
    /// `ok`, or the error code the caller got (`upstream_error`, `revoke_failed`, …).
    var outcome: String
    /// Further fields of this kind of event, after `outcome` (a backup's `file`, `accounts` and `bytes`); never a secret.
    var details: [(Field, LogValue)] = []

    /// A field's name as the two kinds of line write it before the value, spelled out once so that recording an
    /// event (on every token read) copies one literal per field.
    struct Field: Sendable {
        /// `,"name":`, in a JSON line.
        let json: StaticString
        /// ` name=`, in a text line.
        let text: StaticString

        static let event = Field(json: #","event":"#, text: " event=")
        static let account = Field(json: #","account":"#, text: " account=")
        static let provider = Field(json: #","provider":"#, text: " provider=")
        static let endUser = Field(json: #","end_user":"#, text: " end_user=")
        static let caller = Field(json: #","caller":"#, text: " caller=")
        /// The scope a key scoped by `BROKER_API_KEY_SCOPES` used (keys holding everything have none).
        static let scope = Field(json: #","scope":"#, text: " scope=")
        static let requestID = Field(json: #","request_id":"#, text: " request_id=")
        static let outcome = Field(json: #","outcome":"#, text: " outcome=")
        /// A backup's file name.
        static let file = Field(json: #","file":"#, text: " file=")
        /// How many accounts a backup holds.
        static let accounts = Field(json: #","accounts":"#, text: " accounts=")
        /// A backup's size.
        static let bytes = Field(json: #","bytes":"#, text: " bytes=")

        /// A proxied call's method, API host, path (without the query) and status.
        static let method = Field(json: #","method":"#, text: " method=")
        static let host = Field(json: #","host":"#, text: " host=")
        static let path = Field(json: #","path":"#, text: " path=")
        static let status = Field(json: #","status":"#, text: " status=")
        /// A proxied call's body bytes each way, and its duration.
        static let bytesSent = Field(json: #","bytes_sent":"#, text: " bytes_sent=")
        static let bytesReceived = Field(json: #","bytes_received":"#, text: " bytes_received=")
        static let durationMS = Field(json: #","duration_ms":"#, text: " duration_ms=")

        /// Every field, for the test that each spells one name the same way in both lines.
        static let all: [Field] = [
            event, account, provider, endUser, caller, requestID, outcome, file, accounts, bytes, method, host, path, status,
            bytesSent, bytesReceived, durationMS,
        ]
    }

    /// The end user an account belongs to (its `end_user_id`), for the audit trail; nil when it has none.
    static func endUser(of account: Account) -> String? { account.endUser?.id }

    /// The provider part of an account id, for events about an account that could not be read.
    static func provider(ofAccountID id: String) -> String { AccountID(id)?.provider ?? "" }
}
