import BrokerCrypto
import Foundation

/// Everything a ``FakeOAuth2Provider`` remembers, and the protocol rules that change it; no I/O.
///
/// Each step is one `mutating` call made under the provider's lock, returning what to answer.
struct OAuth2ProviderState {
    /// An authorization request that passed the checks, waiting for the user's answer or already answered.
    struct AuthorizationRequest {
        var redirectURI: String
        var state: String?
        var scope: String?
        var challenge: String?
        var askedAt: Date
        /// The OpenID Connect `nonce`, returned in the ID token (OIDC Core §3.1.2.1).
        var nonce: String? = nil
    }

    /// A code issued and not yet used.
    struct IssuedCode {
        var request: AuthorizationRequest
        var uid: String
        var expires: Date
    }

    /// One user's grant: what its tokens are and whose.
    struct Grant {
        var uid: String
        var scope: String?
        var accessTokens: Set<String> = []
        var refreshToken: String?
    }

    /// What the authorize endpoint does with a request.
    enum AuthorizeOutcome: Equatable {
        /// Show this error to the user and redirect nowhere: the client or its redirect URI is unknown (RFC 6749 §4.1.2.1).
        case refuse(String)
        /// Send the browser here: the client's redirect URI with a code or an error.
        case redirect(String)
        /// Show the consent page for the pending request with this id.
        case ask(String)
    }

    /// What the token endpoint answers.
    enum TokenOutcome {
        case tokens(IssuedTokens)
        case error(String, String)
        case raw(String)
    }

    let configuration: FakeOAuth2Provider.Configuration
    var behaviour: FakeOAuth2Provider.Behaviour
    var ledger = FakeOAuth2Provider.Ledger()
    /// One counter for codes and tokens, so names read in the order they were issued.
    private var issued = 0
    private var pending: [String: AuthorizationRequest] = [:]
    private var codes: [String: IssuedCode] = [:]
    private var grants: [Int: Grant] = [:]
    /// The id the next grant gets.
    private var grantCount = 0
    private var accessIndex: [String: (grant: Int, expires: Date)] = [:]
    private var refreshIndex: [String: Int] = [:]
    /// Device codes issued and not yet ended (RFC 8628).
    private var deviceCodes: [String: DeviceCode] = [:]

    /// A device code issued: its user code, scope, interval and what its polls have seen.
    struct DeviceCode {
        var userCode: String
        var scope: String?
        var interval: Int
        var expires: Date
        var polls = 0
        var pendingLeft: Int
        var lastPoll: Date?
    }

    /// Issues a device code and a user code (RFC 8628 §3.2) for `scope`; returns them with the interval and lifetime.
    mutating func authorizeDevice(scope: String?) -> (deviceCode: String, userCode: String, interval: Int, expiresIn: Int) {
        issued += 1
        let deviceCode = "device-code-\(issued)-" + String(repeating: "d", count: 24)
        let userCode = String(format: "WDJB-%04d", issued % 10_000)
        let lifetime = 900
        deviceCodes[deviceCode] = DeviceCode(
            userCode: userCode, scope: scope, interval: behaviour.deviceInterval, expires: now.addingTimeInterval(Double(lifetime)),
            pendingLeft: behaviour.devicePending)
        ledger.deviceAuthorizations += 1
        return (deviceCode, userCode, behaviour.deviceInterval, lifetime)
    }

    /// One device poll (RFC 8628 §3.4, §3.5): `slow_down` when it comes sooner than the interval after the last one
    /// (the interval then grows by 5 s) or at ``FakeOAuth2Provider/Behaviour/deviceSlowDownAt``;
    /// `authorization_pending` while answers are left; then the person's answer.
    mutating func pollDevice(_ form: [String: String]) -> TokenOutcome {
        guard let code = form["device_code"], var entry = deviceCodes[code] else {
            return .error("invalid_grant", "The device code is unknown or ended.")
        }
        let at = now
        ledger.devicePolls.append(at)
        entry.polls += 1
        defer { if deviceCodes[code] != nil { deviceCodes[code] = entry } }
        let tooSoon = entry.lastPoll.map { at < $0.addingTimeInterval(Double(entry.interval)) } ?? false
        entry.lastPoll = at
        if at >= entry.expires {
            deviceCodes[code] = nil
            return .error("expired_token", "The device code expired.")
        }
        if tooSoon || entry.polls == behaviour.deviceSlowDownAt {
            entry.interval += 5
            ledger.deviceSlowDowns += 1
            return .error("slow_down", "Polling too fast.")
        }
        if entry.pendingLeft > 0 {
            entry.pendingLeft -= 1
            return .error("authorization_pending", "The user has not answered yet.")
        }
        switch behaviour.deviceOutcome {
        case .deny:
            deviceCodes[code] = nil
            return .error("access_denied", "The user refused.")
        case .expire:
            deviceCodes[code] = nil
            return .error("expired_token", "The device code expired.")
        case .approve:
            deviceCodes[code] = nil
            var grant = Grant(uid: currentUser, scope: entry.scope)
            let tokens = issue(&grant, lifetime: behaviour.accessTokenLifetime, refresh: behaviour.refreshTokens != .none)
            grants[grantCount] = grant
            index(grantCount, grant, lifetime: behaviour.accessTokenLifetime)
            grantCount += 1
            return .tokens(tokens)
        }
    }

    init(configuration: FakeOAuth2Provider.Configuration, behaviour: FakeOAuth2Provider.Behaviour) {
        self.configuration = configuration
        self.behaviour = behaviour
    }

    private var dialect: OAuth2Dialect { configuration.dialect }
    private var now: Date { configuration.now() }

    // MARK: Authorize

    /// Checks an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3) and approves, refuses or asks.
    mutating func authorize(_ query: [String: String], referer: String?) -> AuthorizeOutcome {
        ledger.authorizeCalls += 1
        ledger.authorizeReferers.append(referer)
        guard query["client_id"] == configuration.clientID else {
            return .refuse("The application asking (client_id) is not registered here.")
        }
        guard let redirect = query["redirect_uri"], acceptsRedirect(redirect) else {
            return .refuse("The redirect_uri is missing or is not registered for this application.")
        }
        let state = query["state"]
        func error(_ code: String, _ description: String) -> AuthorizeOutcome {
            .redirect(FakeWire.appendingQuery(redirect, dialect.authorizationError(code, description, state: state)))
        }
        switch query["response_type"] {
        case "code": break
        case nil where dialect == .weibo: break  // Weibo defaults to code
        case nil: return error("invalid_request", "response_type is missing.")
        default: return error("unsupported_response_type", "Only response_type=code is supported.")
        }
        /// A demand the request missed: recorded, and answered as `invalid_request`.
        func violation(_ description: String) -> AuthorizeOutcome {
            ledger.violations.append("authorize: " + description)
            return error("invalid_request", description)
        }
        let quirks = configuration.quirks
        if let scope = quirks.scope, query[quirks.scopeParameter] != scope {
            return violation("\(quirks.scopeParameter) is \(query[quirks.scopeParameter] ?? "missing"), not \(scope)")
        }
        for (name, value) in quirks.authorizeParameters.sorted(by: { $0.key < $1.key }) where query[name] != value {
            return violation("\(name) is \(query[name] ?? "missing"), not \(value)")
        }
        var challenge: String?
        switch configuration.pkce {
        case .ignored:
            break
        case .forbidden:
            if query["code_challenge"] != nil || query["code_challenge_method"] != nil {
                return violation("PKCE sent to a provider without it")
            }
        case .required, .optional:
            if let sent = query["code_challenge"] {
                // RFC 7636 §4.3 defaults the method to plain, which RFC 9700 §2.1.1 rules out.
                guard query["code_challenge_method"] == "S256" else {
                    return violation("code_challenge_method must be S256.")
                }
                guard Self.isS256Challenge(sent) else {
                    return violation("code_challenge must be 43 base64url characters.")
                }
                challenge = sent
            } else if configuration.pkce == .required {
                return violation("code_challenge is required.")
            }
        }
        let request = AuthorizationRequest(
            redirectURI: redirect, state: state, scope: query[quirks.scopeParameter],
            challenge: challenge, askedAt: now, nonce: query["nonce"])
        switch configuration.consent {
        case .automatic:
            return .redirect(answer(request, approve: !behaviour.deny))
        case .page:
            purgeStaleRequests()
            let id = FakeWire.randomHex(16)
            pending[id] = request
            return .ask(id)
        }
    }

    /// The pending request with this id, if it is still waiting.
    func pendingRequest(_ id: String) -> AuthorizationRequest? {
        pending[id]
    }

    /// Takes the user's answer on the consent page; nil when the request is unknown, answered or older than ten minutes.
    mutating func decide(_ id: String, approve: Bool) -> String? {
        guard let request = pending.removeValue(forKey: id), now.timeIntervalSince(request.askedAt) < 600 else { return nil }
        return answer(request, approve: approve && !behaviour.deny)
    }

    /// The redirect back to the client: a fresh single-use code, or `access_denied` (RFC 6749 §4.1.2, §4.1.2.1).
    private mutating func answer(_ request: AuthorizationRequest, approve: Bool) -> String {
        guard approve else {
            let description = dialect == .weibo ? "user denied your request." : "The user denied the request."
            return FakeWire.appendingQuery(
                request.redirectURI, dialect.authorizationError("access_denied", description, state: request.state))
        }
        issued += 1
        let code = configuration.names.name(configuration.names.code, issued)
        codes[code] = IssuedCode(request: request, uid: nextUser(), expires: now.addingTimeInterval(600))
        ledger.openCodes = codes.count
        var pairs = [("code", code)]
        if let state = request.state { pairs.append(("state", state)) }
        if let issuer = configuration.issuer { pairs.append(("iss", issuer)) }
        return FakeWire.appendingQuery(request.redirectURI, pairs)
    }

    private mutating func nextUser() -> String {
        switch behaviour.users {
        case .fixed(let uid):
            return uid
        case .counting(let next):
            behaviour.users = .counting(from: next + 1)
            return String(next)
        }
    }

    private func acceptsRedirect(_ uri: String) -> Bool {
        if let registered = configuration.redirectURIs { return registered.contains(uri) }
        return uri.hasPrefix("http://") || uri.hasPrefix("https://")
    }

    private mutating func purgeStaleRequests() {
        guard pending.count >= 64 else { return }
        let cutoff = now.addingTimeInterval(-600)
        pending = pending.filter { $0.value.askedAt > cutoff }
    }

    /// RFC 7636 §4.2: BASE64URL(SHA256(verifier)) is always 43 characters of the base64url alphabet.
    static func isS256Challenge(_ text: String) -> Bool {
        text.utf8.count == 43 && Base64URL.decode(text)?.count == 32
    }

    /// RFC 7636 §4.1: 43 to 128 unreserved characters.
    static func isVerifier(_ text: String) -> Bool {
        (43...128).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            }
    }

    // MARK: Token

    /// Spends the code in `form` whatever follows: a code is single use (RFC 6749 §4.1.2). Records the verifier sent.
    mutating func takeCode(_ form: [String: String]) -> IssuedCode? {
        if let verifier = form["code_verifier"] { ledger.verifiers.append(verifier) }
        guard let code = form["code"], let entry = codes.removeValue(forKey: code) else { return nil }
        ledger.openCodes = codes.count
        return entry
    }

    /// The authorization-code grant (RFC 6749 §4.1.3) for a code already taken with ``takeCode(_:)``.
    mutating func exchange(_ entry: IssuedCode?, form: [String: String]) -> TokenOutcome {
        guard let entry, entry.expires > now else { return .error("invalid_grant", "The code is unknown, used or expired.") }
        // RFC 6749 §4.1.3: redirect_uri must be identical to the one the code was issued for.
        guard form["redirect_uri"] == entry.request.redirectURI else {
            return dialect == .weibo
                ? .error("redirect_uri_mismatch", "redirect_uri does not match.")
                : .error("invalid_grant", "redirect_uri does not match the authorization request.")
        }
        if configuration.pkce != .ignored {
            func violation(_ code: String, _ description: String) -> TokenOutcome {
                ledger.violations.append("token: " + description)
                return .error(code, description)
            }
            switch (entry.request.challenge, form["code_verifier"]) {
            case (let challenge?, let verifier?):
                guard Self.isVerifier(verifier), Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == challenge else {
                    return violation("invalid_grant", "The code_verifier does not match the code_challenge.")
                }
            case (.some, nil):
                return violation("invalid_request", "code_verifier is required.")
            case (nil, .some):
                // RFC 9700 §2.1.1: a verifier for a code issued without a challenge is a downgrade.
                return violation("invalid_grant", "The authorization request had no code_challenge.")
            case (nil, nil):
                break
            }
        }
        ledger.exchanges += 1
        if let template = behaviour.exchangeBody {
            issued += 1
            let body = template.replacingOccurrences(of: "{{n}}", with: String(issued))
            honour(body, uid: entry.uid, scope: entry.request.scope)
            return .raw(body)
        }
        var grant = Grant(uid: entry.uid, scope: granted(entry.request.scope))
        var tokens = issue(&grant, lifetime: behaviour.accessTokenLifetime, refresh: behaviour.refreshTokens != .none)
        tokens.nonce = entry.request.nonce
        grants[grantCount] = grant
        index(grantCount, grant, lifetime: behaviour.accessTokenLifetime)
        grantCount += 1
        return .tokens(tokens)
    }

    /// A grant for `uid` as if that user had signed in earlier, made without a flow: its tokens, a refresh token among them
    /// unless the behaviour issues none. Lets a test or benchmark stand up thousands of refreshable accounts at once.
    mutating func grantWithoutFlow(uid: String, scope: String?) -> IssuedTokens {
        var grant = Grant(uid: uid, scope: scope)
        let tokens = issue(&grant, lifetime: behaviour.accessTokenLifetime, refresh: behaviour.refreshTokens != .none)
        grants[grantCount] = grant
        index(grantCount, grant, lifetime: behaviour.accessTokenLifetime)
        grantCount += 1
        return tokens
    }

    /// The scope granted for `asked`: the asked scope tokens without the withheld ones, joined by spaces (RFC 6749 §5.1).
    private func granted(_ asked: String?) -> String? {
        guard let asked, !behaviour.withheldScopes.isEmpty else { return asked }
        let separators: Set<Character> = [" ", ","]
        return asked.split(whereSeparator: { separators.contains($0) }).map(String.init)
            .filter { !behaviour.withheldScopes.contains($0) }.joined(separator: " ")
    }

    /// The refresh grant (RFC 6749 §6): an unknown or spent refresh token is `invalid_grant`.
    mutating func refresh(_ form: [String: String]) -> TokenOutcome {
        guard let presented = form["refresh_token"], let id = refreshIndex[presented], var grant = grants[id] else {
            ledger.stalePresentations += 1
            return .error("invalid_grant", "The refresh token is unknown, used or revoked.")
        }
        let rotate = behaviour.refreshTokens == .rotate
        if rotate {
            // A GitHub App's refresh token works once, and the access token it replaces stops working.
            refreshIndex[presented] = nil
            for token in grant.accessTokens { accessIndex[token] = nil }
            grant.accessTokens = []
            grant.refreshToken = nil
        }
        var tokens = issue(&grant, lifetime: behaviour.refreshedTokenLifetime, refresh: rotate)
        tokens.refreshing = true
        // A refresh answers the grant's scope, less any withheld since (the provider narrowed it, RFC 6749 §6).
        tokens.scope = granted(grant.scope)
        tokens.extraFields = behaviour.refreshExtraFields ?? behaviour.extraFields
        if !rotate { tokens.refreshToken = nil }
        grants[id] = grant
        index(id, grant, lifetime: behaviour.refreshedTokenLifetime)
        return .tokens(tokens)
    }

    /// The client credentials grant (RFC 6749 §4.4.3): an access token for the client itself, with no refresh token.
    ///
    /// It works at the user endpoint as the client's own id, for tests that use it.
    mutating func appToken(scope: String?) -> TokenOutcome {
        var grant = Grant(uid: "client:" + configuration.clientID, scope: scope)
        let tokens = issue(&grant, lifetime: behaviour.accessTokenLifetime, refresh: false)
        grants[grantCount] = grant
        index(grantCount, grant, lifetime: behaviour.accessTokenLifetime)
        grantCount += 1
        return .tokens(tokens)
    }

    /// New tokens for `grant`, counted and remembered.
    private mutating func issue(_ grant: inout Grant, lifetime: Int, refresh: Bool) -> IssuedTokens {
        issued += 1
        let access = configuration.names.name(configuration.names.access, issued)
        grant.accessTokens.insert(access)
        ledger.accessTokens.append(access)
        if refresh {
            let token = configuration.names.name(configuration.names.refresh, issued)
            grant.refreshToken = token
            ledger.currentRefreshToken = token
        }
        return IssuedTokens(
            accessToken: access, refreshToken: grant.refreshToken, expiresIn: lifetime, uid: grant.uid,
            scope: grant.scope, sendsExpiresIn: behaviour.sendsExpiresIn,
            refreshTokenExpiresIn: refresh ? behaviour.refreshTokenLifetime : nil, extraFields: behaviour.extraFields)
    }

    private mutating func index(_ id: Int, _ grant: Grant, lifetime: Int) {
        let expires = now.addingTimeInterval(TimeInterval(lifetime))
        for token in grant.accessTokens where accessIndex[token] == nil { accessIndex[token] = (id, expires) }
        if let refresh = grant.refreshToken { refreshIndex[refresh] = id }
    }

    /// Makes the `access_token` of a replaced exchange answer work at the user endpoint, for a day.
    private mutating func honour(_ body: String, uid: String, scope: String?) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            let access = object["access_token"] as? String
        else { return }
        ledger.accessTokens.append(access)
        grants[grantCount] = Grant(uid: uid, scope: scope, accessTokens: [access])
        accessIndex[access] = (grantCount, now.addingTimeInterval(86_400))
        grantCount += 1
    }

    // MARK: User and revocation

    /// The user id behind a live access token.
    mutating func user(_ token: String?) -> String? {
        ledger.userCalls += 1
        return owner(of: token)
    }

    /// The user a live access token belongs to, or nil; counts nothing.
    func owner(of token: String?) -> String? {
        guard let token, let entry = accessIndex[token], entry.expires > now else { return nil }
        return grants[entry.grant]?.uid
    }

    /// Revokes `token` (RFC 7009 §2.1): a refresh token ends its whole grant, an access token only itself.
    mutating func revoke(_ token: String?) {
        ledger.revokeCalls += 1
        guard let token else { return }
        ledger.revoked.append(token)
        if let id = refreshIndex.removeValue(forKey: token), let grant = grants.removeValue(forKey: id) {
            for access in grant.accessTokens { accessIndex[access] = nil }
        } else if let entry = accessIndex.removeValue(forKey: token) {
            grants[entry.grant]?.accessTokens.remove(token)
        }
    }

    /// The user the next authorization is for (the consent page names it; Weibo's `noAccessToken` answer carries it).
    var currentUser: String {
        switch behaviour.users {
        case .fixed(let uid): uid
        case .counting(let next): String(next)
        }
    }
}
