import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

/// `POST /accounts` and `POST /account/verify`: accounts of `api_key`, `basic` and `bearer` providers, whose
/// credential a back end enters for its user instead of a sign-in.
///
/// The credential is checked field by field (``CredentialScheme/check(_:)``), verified at the provider when it
/// declares a verification request (``CredentialVerifier``), and only then stored, sealed like a token. No answer, log
/// line, audit entry or webhook carries a value.
struct CredentialHandlers: Sendable {
    let accounts: AccountService
    let registry: ProviderRegistry
    let access: AccessControl
    let audit: AuditTrail
    let logger: BrokerLogger
    let verifier: CredentialVerifier

    /// The members `POST /accounts` takes.
    static let createFields: [StaticString] = [
        "provider", "credentials", "uid", "end_user_id", "end_user_email", "end_user_name", "tags", "settings",
    ]

    /// `POST /accounts` (API key, scope `accounts:write`): `{provider, credentials: {field: value}, uid?, end_user_id?,
    /// end_user_email?, end_user_name?, tags?}` → `201` with the account's summary (no secret).
    ///
    /// The uid is the one given; else the user the verification answer names (`verify.user_id_field`); else a
    /// `basic` account's user name; else `key-` and a digest of the credential (``CredentialValues/derivedUID(provider:)``).
    /// Entering a credential for an existing uid replaces the stored one.
    func create(_ request: Request) async -> Response {
        var caller: AccessControl.Caller?
        do {
            let who = try access.authorize(request, .accountsWrite)
            caller = who
            try StrictInput.query(request, allowed: [])
            let (body, form) = try Self.jsonBody(request)
            guard let name = body["provider"] as? String, !name.isEmpty else {
                try StrictInput.fields(Array(body.keys), allowed: Self.createFields)
                throw BrokerError.badRequest("The provider field is required (a string).")
            }
            guard let provider = registry.provider(named: name) else { throw BrokerError.unknownProvider(name) }
            try who.grant.require(provider: provider.name)
            guard provider.kind.holdsEnteredCredentials, let scheme = provider.credentials else {
                return try await importTokens(request, body: body, form: form, provider: provider, caller: who)
            }
            try StrictInput.fields(Array(body.keys), allowed: Self.createFields)
            // Settings first: a value that may not stand in a URL is refused before any call (400 invalid_setting).
            let (resolved, settings) = try provider.applyingSettings(try Self.settings(body["settings"]))
            let values = try Self.values(body["credentials"], scheme: scheme)
            let owner = try OwnerParameters.owner(form)
            try who.grant.require(endUser: owner.endUser?.id)
            var uid: String?
            if let given = body["uid"] {
                guard let text = given as? String else { throw BrokerError.badRequest("uid must be a string.") }
                if let problem = ProviderUserID.problem(with: text) { throw BrokerError.badRequest("uid \(problem).") }
                uid = text
            }
            let outcome = try await verifier.verify(values, provider: resolved)
            if let outcome, !outcome.valid {
                logger.log(
                    .warning, "credential refused", [("provider", .string(provider.name)), ("status", .int(outcome.status))])
                throw BrokerError.credentialInvalid(provider: provider.name, status: outcome.status)
            }
            let chosen = uid ?? outcome?.userID ?? values.derivedUID(provider: provider)
            // A key limited to some end users may not replace the credential of an account outside its limits.
            if let existing = try await accounts.stored(id: AccountID(provider: provider.name, uid: chosen)) {
                try who.grant.require(account: existing)
            }
            let (account, existed) = try await accounts.storeEntered(
                values, provider: provider, uid: chosen, endUser: owner.endUser,
                tags: body["tags"] == nil ? nil : owner.tags, settings: settings)
            logger.log(
                .info, "credential stored",
                [
                    ("provider", .string(provider.name)), ("account", .string(account.id)), ("verified", .bool(outcome != nil)),
                    ("replaced", .bool(existed)),
                ])
            audit.record(.credentialStored, account, caller: who.name, request: request, scope: who.audited(.accountsWrite))
            var headers = OAuthHandlers.noStore()
            headers.add(name: "Location", value: "/account?id=" + PercentEncoding.rfc3986(account.id))
            return Response.json(
                existed ? .ok : .created, AccountJSON.summary(account, status: accounts.reportedStatus(of: account)), headers: headers)
        } catch {
            let brokerError = (error as? BrokerError) ?? .badRequest("The request could not be handled.")
            if let caller, case .credentialInvalid = brokerError {
                var event = AuditEvent(
                    kind: .credentialStored, account: nil, provider: nil, endUser: nil, caller: caller.name, requestID: request.id,
                    outcome: brokerError.code)
                if let scope = caller.audited(.accountsWrite) { event.details.append((.scope, .string(scope))) }
                audit.record(event)
            }
            return brokerError.response
        }
    }

    /// The members an import of OAuth tokens takes.
    static let importFields: [StaticString] = [
        "provider", "access_token", "refresh_token", "expires_at", "scope", "uid", "end_user_id", "end_user_email", "end_user_name",
        "tags", "dry_run", "settings",
    ]

    /// `POST /accounts` for a provider that signs in: OAuth tokens brought from another system (``TokenImport``).
    ///
    /// With `refresh_token` the broker refreshes once before storing, so a dead grant is `422 credential_invalid`
    /// and nothing is stored; the uid is the given one or the provider's user endpoint's. `dry_run: true` does every
    /// check and call and stores nothing (`200` with the summary it would store).
    private func importTokens(
        _ request: Request, body: [String: Any], form: RequestForm, provider: ProviderConfiguration, caller who: AccessControl.Caller
    ) async throws -> Response {
        try StrictInput.fields(Array(body.keys), allowed: Self.importFields)
        // An OAuth 1.0a token is half a credential without its secret, and a TMDB session is the broker's to start.
        guard provider.kind == .oauth2 || provider.kind == .oidc else {
            throw BrokerError.badRequest(
                "Tokens of \(provider.kind.rawValue) providers cannot be imported; connect by signing in (POST /authorize).")
        }
        func text(_ name: String) throws(BrokerError) -> String? {
            guard let value = body[name] else { return nil }
            guard let string = value as? String, !string.isEmpty, string.utf8.count <= 16 * 1024,
                !string.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
            else { throw .badRequest("\(name) must be a non-empty string of at most 16 KB without control characters.") }
            return string
        }
        guard let access = try text("access_token") else {
            throw BrokerError.badRequest(
                "The provider \(provider.name) is \(provider.kind.rawValue): import its tokens with access_token, or connect by signing in (POST /authorize)."
            )
        }
        var expiresAt: Date?
        if let written = try text("expires_at") {
            guard let date = RFC3339Date.parse(written) else { throw BrokerError.badRequest("expires_at must be an RFC 3339 date-time.") }
            expiresAt = date
        }
        let uid = try text("uid")
        if let uid, let problem = ProviderUserID.problem(with: uid) { throw BrokerError.badRequest("uid \(problem).") }
        var dryRun = false
        if let flag = body["dry_run"] {
            // JSON true or false only: JSONSerialization gives both as an NSNumber of type code `c`.
            guard let number = flag as? NSNumber, String(cString: number.objCType) == "c" else {
                throw BrokerError.badRequest("dry_run must be true or false.")
            }
            dryRun = number.boolValue
        }
        let owner = try OwnerParameters.owner(form)
        try who.grant.require(endUser: owner.endUser?.id)
        if let uid, let existing = try await accounts.stored(id: AccountID(provider: provider.name, uid: uid)) {
            try who.grant.require(account: existing)
        }
        let (account, existed) = try await accounts.importTokens(
            TokenImport(
                provider: provider.name, accessToken: Secret(access), refreshToken: try text("refresh_token").map(Secret.init),
                expiresAt: expiresAt, scope: try text("scope"), uid: uid, endUser: owner.endUser,
                tags: body["tags"] == nil ? nil : owner.tags, dryRun: dryRun
            )
            .with(settings: try Self.settings(body["settings"])))
        logger.log(
            .info, dryRun ? "token import checked" : "tokens imported",
            [("provider", .string(provider.name)), ("account", .string(account.id)), ("replaced", .bool(existed))])
        if !dryRun { audit.record(.credentialStored, account, caller: who.name, request: request, scope: who.audited(.accountsWrite)) }
        var headers = OAuthHandlers.noStore()
        headers.add(name: "Location", value: "/account?id=" + PercentEncoding.rfc3986(account.id))
        return Response.json(
            existed || dryRun ? .ok : .created, AccountJSON.summary(account, status: accounts.reportedStatus(of: account)),
            headers: headers)
    }

    /// `POST /account/verify?id=ID` (API key, scope `accounts:read`): runs the provider's verification request with the
    /// stored credential now. `200 {"id","valid":true,"status"}` when the provider accepts it; `422 credential_invalid`
    /// with the provider's status when it refuses it. The verdict is recorded as the schedule's is: a refusal makes an
    /// `active` account `invalid` (`account.invalid`), a pass makes an `invalid` one `active` (`account.recovered`).
    func verify(_ request: Request) async -> Response {
        var named: String?
        var caller = ""
        do {
            let who = try access.authorize(request, .accountsRead)
            caller = who.name
            let id = try OAuthHandlers.accountID(request)
            named = id
            if let provider = AccountID(id)?.provider { try who.grant.require(provider: provider) }
            let stored = try AccountID.stored(id)
            try await who.requireStored(stored, in: accounts)
            guard let account = try await accounts.stored(id: stored) else { throw BrokerError.notFound }
            try who.grant.require(account: account)
            guard let provider = registry.provider(named: account.provider) else { throw BrokerError.unknownProvider(account.provider) }
            guard provider.kind.holdsEnteredCredentials, let values = CredentialValues(stored: account.accessToken) else {
                throw BrokerError.badRequest("The account's provider is \(provider.kind.rawValue); only entered credentials are verified.")
            }
            let (resolved, _) = try provider.applyingSettings(account.settings)
            guard let outcome = try await verifier.verify(values, provider: resolved) else {
                throw BrokerError.badRequest("The provider \(provider.name) declares no verification request (verify).")
            }
            try await accounts.recordVerification(id: stored, valid: outcome.valid)
            audit.record(
                .credentialVerified, account, caller: who.name, request: request,
                outcome: outcome.valid ? "ok" : "credential_invalid", scope: who.audited(.accountsRead))
            guard outcome.valid else { throw BrokerError.credentialInvalid(provider: provider.name, status: outcome.status) }
            return Response.json(
                .ok,
                AccountJSON.object([("id", JSONString.quote(account.id)), ("valid", "true"), ("status", String(outcome.status))]),
                headers: OAuthHandlers.noStore())
        } catch {
            let brokerError = (error as? BrokerError) ?? .badRequest("The request could not be handled.")
            // A refusal by the provider was recorded with the call; any other failure after naming the account is here.
            if let named, !caller.isEmpty, brokerError.code != "credential_invalid" {
                audit.record(.credentialVerified, accountID: named, caller: caller, request: request, outcome: brokerError.code)
            }
            return brokerError.response
        }
    }

    /// `PATCH /account?id=ID` (API key, scope `accounts:write`): `{end_user_id?, end_user_email?, end_user_name?,
    /// tags?, metadata?}` changes the end user (the three together; `end_user_id: ""` clears it), replaces the tags
    /// and replaces the metadata (a JSON object of at most 16 KB; `{}` clears it), without a sign-in; `200` with the
    /// summary, and `account.updated` to the webhooks.
    func edit(_ request: Request) async -> Response {
        do {
            let who = try access.authorize(request, .accountsWrite)
            let id = try OAuthHandlers.accountID(request)
            let stored = try AccountID.stored(id)
            if let provider = AccountID(id)?.provider { try who.grant.require(provider: provider) }
            let (body, form) = try Self.jsonBody(request)
            try StrictInput.fields(Array(body.keys), allowed: ["end_user_id", "end_user_email", "end_user_name", "tags", "metadata"])
            guard !body.isEmpty else { throw BrokerError.badRequest("Give end_user_id, tags or metadata to change.") }
            var metadata: String??
            if let given = body["metadata"] {
                switch AccountMetadata.text(of: given) {
                case .success(let text): metadata = .some(text)
                case .failure(let problem): throw BrokerError.badRequest(problem.message)
                }
            }
            guard let account = try await accounts.stored(id: stored) else { throw BrokerError.notFound }
            try who.grant.require(account: account)
            var endUser: EndUser??
            if body["end_user_id"] as? String == "" {
                guard body["end_user_email"] == nil, body["end_user_name"] == nil else {
                    throw BrokerError.badRequest("end_user_email and end_user_name need an end_user_id.")
                }
                try who.grant.require(endUser: nil)
                endUser = .some(nil)
            } else if body["end_user_id"] != nil || body["end_user_email"] != nil || body["end_user_name"] != nil {
                let owner = try OwnerParameters.owner(form)
                try who.grant.require(endUser: owner.endUser?.id)
                endUser = .some(owner.endUser)
            }
            let tags = body["tags"] == nil ? nil : try OwnerParameters.owner(form).tags
            let edited = try await accounts.edit(id: stored, endUser: endUser, tags: tags, metadata: metadata)
            logger.log(.info, "account edited", [("account", .string(edited.id))])
            return Response.json(
                .ok, AccountJSON.summary(edited, status: accounts.reportedStatus(of: edited)), headers: OAuthHandlers.noStore())
        } catch {
            return ((error as? BrokerError) ?? .badRequest("The request could not be handled.")).response
        }
    }

    /// The JSON object body, and the same as a ``RequestForm`` for the owner fields; 400 when it is not one.
    private static func jsonBody(_ request: Request) throws(BrokerError) -> ([String: Any], RequestForm) {
        let type = (request.headers["Content-Type"] ?? "").lowercased()
        guard type.hasPrefix("application/json") else {
            throw .badRequest("The body must be a JSON object (Content-Type: application/json).")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] else {
            throw .badRequest("The body is not a JSON object.")
        }
        return (object.filter { !($0.value is NSNull) }, RequestForm(request))
    }

    /// The `settings` member: an object of strings (checked against the provider by
    /// ``ProviderConfiguration/applyingSettings(_:)``); empty when absent.
    static func settings(_ raw: Any?) throws(BrokerError) -> [String: String] {
        guard let raw else { return [:] }
        guard let object = raw as? [String: Any] else { throw .badRequest("settings must be an object of strings.") }
        var strings: [String: String] = [:]
        for (name, value) in object {
            guard let text = value as? String else { throw .invalidSetting(name: name, reason: "must be a string") }
            strings[name] = text
        }
        return strings
    }

    /// The `credentials` member checked against the provider's fields; every refusal names the field, never a value.
    private static func values(_ raw: Any?, scheme: CredentialScheme) throws(BrokerError) -> CredentialValues {
        guard let object = raw as? [String: Any] else {
            throw .badRequest("The credentials field is required: an object of \(scheme.fields.map(\.name).joined(separator: ", ")).")
        }
        var strings: [String: String] = [:]
        for name in object.keys.sorted() {
            guard let text = object[name] as? String else {
                // An unknown name is named as unknown first; a known one must be a string.
                if !scheme.fields.contains(where: { $0.name == name }) {
                    throw .badRequest(CredentialInputError.unknownField(name, expected: scheme.fields.map(\.name)).message)
                }
                throw .badRequest("The credential field \"\(name)\" must be a string.")
            }
            strings[name] = text
        }
        switch scheme.check(strings) {
        case .success(let values): return values
        case .failure(let error): throw .badRequest(error.message)
        }
    }
}
