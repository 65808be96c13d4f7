import BrokerHTTP

extension OAuth2Endpoints {
    /// The settings `POST /_fake/control` takes, each a form field.
    static let controlFields = [
        "deny", "exchange_delay", "refresh_delay", "exchange_failure", "refresh_failure",
        "access_token_lifetime", "refreshed_token_lifetime",
    ]

    /// `GET /_fake/stats`: the ledger's counters as JSON, for a test in another process.
    func stats(_ request: Request) -> Response {
        let ledger = state.withLock { $0.ledger }
        let referers = ledger.authorizeReferers.map { $0.map(JSONString.quote) ?? "null" }.joined(separator: ",")
        let body =
            "{\"authorize_calls\":\(ledger.authorizeCalls),\"token_calls\":\(ledger.tokenCalls),"
            + "\"exchanges\":\(ledger.exchanges),\"refresh_calls\":\(ledger.refreshCalls),\"user_calls\":\(ledger.userCalls),"
            + "\"revoke_calls\":\(ledger.revokeCalls),\"open_codes\":\(ledger.openCodes),"
            + "\"stale_presentations\":\(ledger.stalePresentations),\"authorize_referers\":[\(referers)]}"
        return FakeWire.answer(.ok, "application/json", body, extra: [("Cache-Control", "no-store")])
    }

    /// `POST /_fake/control`: changes the behaviour from form fields (``controlFields``); all or nothing.
    ///
    /// `deny=true|false`, `exchange_delay=SECONDS`, `refresh_delay=SECONDS`, `exchange_failure=NAME|none`,
    /// `refresh_failure=NAME|none` (names of ``FakeOAuth2Provider/Failure``), `access_token_lifetime=SECONDS`,
    /// `refreshed_token_lifetime=SECONDS`.
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
            value == "none" ? .some(nil) : FakeOAuth2Provider.Failure(name: value).map { .some($0) }
        }
        switch name {
        case "deny":
            guard value == "true" || value == "false" else { return nil }
            return { $0.deny = value == "true" }
        case "exchange_delay":
            guard let s = seconds() else { return nil }
            return { $0.exchangeDelay = s }
        case "refresh_delay":
            guard let s = seconds() else { return nil }
            return { $0.refreshDelay = s }
        case "exchange_failure":
            guard let f = failure() else { return nil }
            return { $0.exchangeFailure = f }
        case "refresh_failure":
            guard let f = failure() else { return nil }
            return { $0.refreshFailure = f }
        case "access_token_lifetime":
            guard let n = lifetime() else { return nil }
            return { $0.accessTokenLifetime = n }
        case "refreshed_token_lifetime":
            guard let n = lifetime() else { return nil }
            return { $0.refreshedTokenLifetime = n }
        default:
            return nil
        }
    }
}
