import BrokerHTTP
import Foundation

extension OAuth2Endpoints {
    /// The settings `POST /_fake/control` takes, each a form field.
    static let controlFields = [
        "deny", "exchange_delay", "exchange_hold", "refresh_delay", "exchange_failure", "refresh_failure",
        "access_token_lifetime", "refreshed_token_lifetime", "uid", "refresh_tokens", "revoke_failure", "extra_fields",
        "client_credentials_failure", "client_credentials_delay",
        "discovery", "id_token", "withhold_scopes",
    ]

    /// `GET /_fake/stats`: the ledger's counters as JSON, for a test in another process.
    func stats(_ request: Request) -> Response {
        let ledger = state.withLock { $0.ledger }
        let referers = ledger.authorizeReferers.map { $0.map(JSONString.quote) ?? "null" }.joined(separator: ",")
        let body =
            "{\"authorize_calls\":\(ledger.authorizeCalls),\"token_calls\":\(ledger.tokenCalls),"
            + "\"exchanges\":\(ledger.exchanges),\"refresh_calls\":\(ledger.refreshCalls),\"user_calls\":\(ledger.userCalls),"
            + "\"revoke_calls\":\(ledger.revokeCalls),\"open_codes\":\(ledger.openCodes),"
            + "\"stale_presentations\":\(ledger.stalePresentations),\"client_credentials_calls\":\(ledger.clientCredentialsCalls),"
            + "\"max_refreshes_in_flight\":\(ledger.maxRefreshesInFlight),"
            + "\"authorize_referers\":[\(referers)]}"
        return FakeWire.answer(.ok, "application/json", body, extra: [("Cache-Control", "no-store")])
    }

    /// `POST /_fake/control`: changes the behaviour from form fields (``controlFields``); all or nothing.
    ///
    /// `deny=true|false`, `exchange_delay=SECONDS`, `exchange_hold=true|false` (code exchanges wait until released),
    /// `refresh_delay=SECONDS`, `exchange_failure=NAME|none`,
    /// `refresh_failure=NAME|none` (names of ``FakeOAuth2Provider/Failure``; `rate_limited:SECONDS` sets its
    /// `Retry-After`), `access_token_lifetime=SECONDS`, `refreshed_token_lifetime=SECONDS`, `uid=ID` (every
    /// authorization from now on is for that user), `refresh_tokens=none|rotate|keep`, `revoke_failure=STATUS|none`
    /// (revocation answers that 4xx or 5xx status and revokes nothing), `client_credentials_failure=NAME|none`,
    /// `client_credentials_delay=SECONDS`, `discovery=up|down` (the discovery document answers 503 while down),
    /// `id_token=NAME|none` (names of ``FakeOAuth2Provider/IDTokenFault``; `none` issues a correct one),
    /// `withhold_scopes=a,b|none` (code exchanges grant the scope asked for without these),
    /// `extra_fields=JSON` (an object of string members every token answer adds at its top level,
    /// `{"instance_url":"https://…"}`; `{}` for none).
    func control(_ request: Request) -> Response {
        let fields = FakeWire.form(request)
        var changes: [(inout FakeOAuth2Provider.Behaviour) -> Void] = []
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            guard let change = Self.change(name, value) else {
                return FakeWire.answer(
                    .badRequest, "application/json",
                    "{\"error\":\"invalid_control\",\"message\":\(JSONString.quote("cannot set \(name) to \(value)"))}")
            }
            changes.append(change)
        }
        state.withLock { s in for change in changes { change(&s.behaviour) } }
        return stats(request)
    }

    /// The change one control field asks for, or nil when the field or its value is unknown.
    private static func change(_ name: String, _ value: String) -> ((inout FakeOAuth2Provider.Behaviour) -> Void)? {
        func seconds() -> Double? { Double(value).flatMap { $0 >= 0 && $0 <= 3600 ? $0 : nil } }
        func lifetime() -> Int? { Int(value).flatMap { $0 > 0 ? $0 : nil } }
        func failure() -> FakeOAuth2Provider.Failure?? {
            if value == "none" { return .some(nil) }
            if value.hasPrefix("rate_limited:") {
                let retryAfter = String(value.dropFirst("rate_limited:".count))
                guard !retryAfter.isEmpty, retryAfter.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return .some(.rateLimited(retryAfter: retryAfter))
            }
            return FakeOAuth2Provider.Failure(name: value).map { .some($0) }
        }
        switch name {
        case "device_pending":
            guard let count = Int(value), count >= 0 else { return nil }
            return { $0.devicePending = count }
        case "device_slow_down_at":
            guard let poll = Int(value), poll >= 0 else { return nil }
            return { $0.deviceSlowDownAt = poll }
        case "device_outcome":
            guard let outcome = FakeOAuth2Provider.DeviceOutcome(rawValue: value) else { return nil }
            return { $0.deviceOutcome = outcome }
        case "device_interval":
            guard let seconds = Int(value), seconds >= 0 else { return nil }
            return { $0.deviceInterval = seconds }
        case "device_answer":
            return { $0.deviceAnswer = value == "none" ? nil : value }
        case "deny":
            guard value == "true" || value == "false" else { return nil }
            return { $0.deny = value == "true" }
        case "exchange_delay":
            guard let s = seconds() else { return nil }
            return { $0.exchangeDelay = s }
        case "exchange_hold":
            guard value == "true" || value == "false" else { return nil }
            return { $0.exchangeHeld = value == "true" }
        case "refresh_hold":
            guard value == "true" || value == "false" else { return nil }
            return { $0.refreshHeld = value == "true" }
        case "refresh_delay":
            guard let s = seconds() else { return nil }
            return { $0.refreshDelay = s }
        case "exchange_failure":
            guard let f = failure() else { return nil }
            return { $0.exchangeFailure = f }
        case "refresh_failure":
            guard let f = failure() else { return nil }
            return { $0.refreshFailure = f }
        case "client_credentials_failure":
            guard let f = failure() else { return nil }
            return { $0.clientCredentialsFailure = f }
        case "client_credentials_delay":
            guard let s = seconds() else { return nil }
            return { $0.clientCredentialsDelay = s }
        case "access_token_lifetime":
            guard let n = lifetime() else { return nil }
            return { $0.accessTokenLifetime = n }
        case "refreshed_token_lifetime":
            guard let n = lifetime() else { return nil }
            return { $0.refreshedTokenLifetime = n }
        case "uid":
            guard !value.isEmpty else { return nil }
            return { $0.users = .fixed(value) }
        case "refresh_tokens":
            let modes: [String: FakeOAuth2Provider.RefreshTokens] = ["none": .none, "rotate": .rotate, "keep": .keep]
            guard let mode = modes[value] else { return nil }
            return { $0.refreshTokens = mode }
        case "discovery":
            guard value == "up" || value == "down" else { return nil }
            return { $0.discoveryDown = value == "down" }
        case "id_token":
            if value == "none" { return { $0.idTokenFault = nil } }
            guard let fault = FakeOAuth2Provider.IDTokenFault(rawValue: value) else { return nil }
            return { $0.idTokenFault = fault }
        case "extra_fields":
            guard let object = (try? JSONSerialization.jsonObject(with: Data(value.utf8))) as? [String: Any] else { return nil }
            var fields: [String: String] = [:]
            for (member, text) in object {
                guard let text = text as? String else { return nil }
                fields[member] = JSONString.quote(text)
            }
            return { $0.extraFields = fields }
        case "withhold_scopes":
            if value == "none" { return { $0.withheldScopes = [] } }
            let scopes = value.split(separator: ",").map(String.init)
            guard !scopes.isEmpty else { return nil }
            return { $0.withheldScopes = scopes }
        case "revoke_failure":
            if value == "none" { return { $0.revokeFailure = nil } }
            guard let code = Int(value), (400...599).contains(code) else { return nil }
            let known: [HTTPStatus] = [.badRequest, .unauthorized, .internalServerError, .badGateway, .serviceUnavailable]
            let status = known.first { $0.code == code } ?? HTTPStatus(code, code < 500 ? "Client Error" : "Server Error")
            return { $0.revokeFailure = status }
        default:
            return nil
        }
    }
}

extension OAuth2Endpoints {
    /// The device authorization endpoint's path (RFC 8628 §3.1), the same in every dialect.
    static let devicePath = "/device/code"

    /// `POST /device/code`: the client (by `client_id`, or its full credentials) gets a device code and a user code
    /// (RFC 8628 §3.2), or ``FakeOAuth2Provider/Behaviour/deviceAnswer`` verbatim.
    func deviceAuthorization(_ request: Request) -> Response {
        let form = FakeWire.form(request)
        let clientID = form["client_id"] ?? FakeWire.clientCredentials(request, form: form)?.id
        guard clientID == configuration.clientID else { return tokenErrorAnswer("invalid_client", "Unknown client_id.") }
        if let raw = state.withLock({ $0.behaviour.deviceAnswer }) {
            return FakeWire.answer(.ok, "application/json", raw)
        }
        let issued = state.withLock { $0.authorizeDevice(scope: form["scope"]) }
        let verification = "http://" + (request.headers["Host"] ?? "127.0.0.1") + "/device"
        let body = FakeJSON.object([
            ("device_code", JSONString.quote(issued.deviceCode)), ("user_code", JSONString.quote(issued.userCode)),
            ("verification_uri", JSONString.quote(verification)),
            ("verification_uri_complete", JSONString.quote(verification + "?user_code=" + issued.userCode)),
            ("expires_in", String(issued.expiresIn)), ("interval", String(issued.interval)),
        ])
        return FakeWire.answer(.ok, "application/json", body)
    }

    /// An RFC 6749 §5.2 error answer, HTTP 400.
    private func tokenErrorAnswer(_ code: String, _ description: String) -> Response {
        FakeWire.answer(
            .badRequest, "application/json", "{\"error\":\(JSONString.quote(code)),\"error_description\":\(JSONString.quote(description))}")
    }
}

/// JSON objects from members whose values are already JSON text.
enum FakeJSON {
    /// `{"name":value,…}` in the given order.
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.map { JSONString.quote($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }
}
