import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// Who may use an account: a service presenting the API key (any account), or the
/// browser whose signed session cookie lists it.
struct AccessControl: Sendable {
    /// The valid API keys with their names (`BROKER_API_KEY` as `default`, then `BROKER_API_KEYS`); none means
    /// service endpoints always answer 401.
    let apiKeys: [NamedAPIKey]
    /// The key that signs session cookies (`BROKER_SECRET` or the generated one).
    let cookieSecret: [UInt8]
    /// How long a session cookie lives, in seconds.
    let sessionMaxAge: Int
    /// Whether a browser's session cookie gives it any right (`BROKER_CONNECT_PAGE`); when off only API keys do.
    let browserSessions: Bool
    /// Each key's bytes, kept so the check on every `/account` read allocates nothing.
    private let keyBytes: [[UInt8]]
    /// Each key's caller, made once (with its audit field written out) rather than on every request.
    private let callers: [Caller]

    init(apiKeys: [NamedAPIKey], cookieSecret: [UInt8], sessionMaxAge: Int, browserSessions: Bool = true) {
        self.browserSessions = browserSessions
        self.apiKeys = apiKeys
        self.cookieSecret = cookieSecret
        self.sessionMaxAge = sessionMaxAge
        keyBytes = apiKeys.map { Array($0.key.value.utf8) }
        callers = apiKeys.map { Caller(name: $0.name, grant: $0.grant) }
    }

    /// The name of the key the request carries as `Authorization: Bearer <API key>`, or nil when it carries none
    /// that is valid. Every key is compared, each in constant time, so the time taken says nothing about the bytes.
    func caller(_ request: Request) -> String? { caller(headers: request.headers) }

    /// The name of the key these header fields carry, as ``caller(_:)``.
    func caller(headers: HTTPHeaders) -> String? {
        headers["Authorization"].flatMap(caller(authorization:))
    }

    /// The name of the key an `Authorization` field value carries, as ``caller(_:)``.
    private func caller(authorization header: String) -> String? {
        keyIndex(authorization: header).map { apiKeys[$0].name }
    }

    /// The key the request carries, with what it may do; nil without a valid key.
    func apiCaller(_ request: Request) -> Caller? {
        request.headers["Authorization"].flatMap(keyIndex(authorization:)).map { callers[$0] }
    }

    /// The key the request carries when it holds `scope`: `401` without a valid key, `403 insufficient_permissions`
    /// naming the scope when the key lacks it.
    func authorize(_ request: Request, _ scope: APIKeyScope) throws(BrokerError) -> Caller {
        guard let caller = apiCaller(request) else { throw .unauthorized }
        try caller.grant.require(scope)
        return caller
    }

    /// Who made a call: a key's name and grant, or the browser (``AccessControl/browser``, bound by its session instead).
    ///
    /// One reference to what is made once per key (``Held``): a request copies and drops its caller with one
    /// retain and one release, not one per string, set and list of the name, the grant and the audit field.
    struct Caller: Sendable {
        /// The name, the grant and the audit field.
        private final class Held: Sendable {
            let name: String
            let grant: KeyGrant
            let auditField: AuditTrail.CallerField

            init(name: String, grant: KeyGrant) {
                self.name = name
                self.grant = grant
                auditField = AuditTrail.CallerField(name)
            }
        }

        private let held: Held

        /// The key's name, or ``AccessControl/browser``.
        var name: String { held.name }
        /// What the key may do.
        var grant: KeyGrant { held.grant }
        /// The audit lines' `caller` field for ``name``, written out once.
        var auditField: AuditTrail.CallerField { held.auditField }

        init(name: String, grant: KeyGrant) {
            held = Held(name: name, grant: grant)
        }

        /// The browser, which its session cookie limits to the accounts it connected.
        static let browser = Caller(name: AccessControl.browser, grant: .all)
        /// For a key limited to some end users: refuses the stored account `id` when it belongs to another end user
        /// (or none), before anything is done with it (a read that would refresh it, a delete, a proxied call).
        func requireStored(_ id: AccountID, in accounts: AccountService) async throws(BrokerError) {
            guard grant.endUserPrefix != nil, let stored = try await accounts.stored(id: id) else { return }
            try grant.require(account: stored)
        }
        /// What the audit trail records as the scope used: `scope` for a scoped key, nil for one holding everything.
        func audited(_ scope: APIKeyScope) -> String? { grant.isUnrestricted ? nil : scope.rawValue }
    }

    /// The index in ``apiKeys`` of the key an `Authorization` field value carries.
    private func keyIndex(authorization header: String) -> Int? {
        guard !keyBytes.isEmpty else { return nil }
        var header = header
        // RFC 9110 §11.1: the scheme is case-insensitive. Compared on bytes, in place: this runs on every /account read.
        let index = header.withUTF8 { bytes -> Int? in
            let schemeCount = 7
            guard bytes.count > schemeCount, let base = bytes.baseAddress else { return nil }
            // `bearer ` in one word (bytes 0–6, little-endian): OR-ing 0x20 into the six letters lowers an upper-case
            // one and maps no other byte onto a lower-case letter; the space must be a space.
            let word = UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)) & 0x00FF_FFFF_FFFF_FFFF
            guard word | 0x0000_2020_2020_2020 == 0x0020_7265_7261_6562 else { return nil }
            let presented = UnsafeBufferPointer(rebasing: bytes[schemeCount...])
            var found: Int?
            for (i, key) in keyBytes.enumerated() {
                let equal = key.withUnsafeBufferPointer { ConstantTime.equals(presented, $0) }
                if equal && found == nil { found = i }
            }
            return found
        }
        return index
    }

    /// Whether the request carries a valid API key.
    func hasAPIKey(_ request: Request) -> Bool { caller(request) != nil }

    /// This browser's verified session, if it sent one.
    func session(_ request: Request) -> SessionCookie? {
        guard browserSessions else { return nil }
        return request.cookies[SessionCookie.name].flatMap { SessionCookie.decode($0, secret: cookieSecret) }
    }

    /// The label the audit trail gives a browser caller.
    static let browser = "browser"

    /// Throws `unauthorized` unless the request may use account `id`; returns who asked: the API key's name,
    /// or `browser` for a session cookie.
    @discardableResult
    func require(_ request: Request, mayUse id: String) throws(BrokerError) -> String {
        try require(request, mayUse: id, scope: .tokensRead).name
    }

    /// As ``require(_:mayUse:)``, for a key: it must hold `scope`, and the account's provider (from its id) must be
    /// within the key's providers; the end user is checked on the account itself (``KeyGrant/require(account:)``).
    func require(_ request: Request, mayUse id: String, scope: APIKeyScope) throws(BrokerError) -> Caller {
        if let authorization = request.headers["Authorization"] {
            guard let index = keyIndex(authorization: authorization) else { throw .unauthorized }
            let caller = callers[index]
            try caller.grant.require(scope)
            // The provider is cut out of the id only for a key limited to some: building it costs a string per read.
            if caller.grant.providers != nil, let provider = AccountID(id)?.provider { try caller.grant.require(provider: provider) }
            return caller
        }
        guard let session = session(request), session.holds(id) else { throw .unauthorized }
        return .browser
    }

    /// The `Set-Cookie` value for a session.
    func sessionCookieHeader(_ session: SessionCookie, cookies: CookieHeader) -> String {
        cookies.set(SessionCookie.name, session.encode(secret: cookieSecret), path: "/", maxAge: sessionMaxAge)
    }
}
