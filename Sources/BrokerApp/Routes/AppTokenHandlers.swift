import BrokerCore
import BrokerHTTP

/// `GET /app-token?provider=P[&scope=S]`: a client credentials token for a back end holding the API key.
final class AppTokenHandlers: Sendable {
    let service: AppTokenService
    let access: AccessControl
    /// Where each hand-out is recorded.
    let audit: AuditTrail?

    init(service: AppTokenService, access: AccessControl, audit: AuditTrail? = nil) {
        self.service = service
        self.access = access
        self.audit = audit
    }

    /// The token as JSON, never cached by anyone on the way (RFC 6749 §5.1); errors as for `/account`.
    ///
    /// A failed fetch whose key now backs off carries `Retry-After` with the
    /// seconds until the broker will ask the provider again (RFC 9110 §10.2.3).
    func appToken(_ request: Request) async -> Response {
        let who: AccessControl.Caller
        do { who = try access.authorize(request, .tokensRead) } catch { return error.response }
        let caller = who.name
        do { try StrictInput.query(request, allowed: ["provider", "scope"]) } catch { return error.response }
        guard let provider = request.query("provider"), !provider.isEmpty else {
            return BrokerError.badRequest("The provider query parameter is required.").response
        }
        do { try who.grant.require(provider: provider) } catch { return error.response }
        let scope = request.query("scope")
        do {
            let token = try await service.token(provider: provider, scope: scope)
            record(provider: provider, caller: caller, request: request, outcome: "ok")
            return OAuthHandlers.tokenResponse(Self.json(token))
        } catch {
            record(provider: provider, caller: caller, request: request, outcome: error.code)
            var response = error.response
            if error.isUpstreamFailure, let seconds = await service.retryAfter(provider: provider, scope: scope) {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
    }

    private func record(provider: String, caller: String, request: Request, outcome: String) {
        audit?.record(
            AuditEvent(
                kind: .appTokenRead, account: nil, provider: provider, endUser: nil, caller: caller, requestID: request.id,
                outcome: outcome))
    }

    /// `{"provider","access_token","token_type","scope","expires_at","issued_at"}`: `scope` is what the provider
    /// granted, or when it did not say, what was asked (RFC 6749 §5.1); null when neither.
    static func json(_ token: AppToken) -> [UInt8] {
        var json = JSONObjectWriter()
        json.string("provider", token.provider)
        json.string("access_token", token.accessToken.value)
        json.string("token_type", token.tokenType)
        json.string("scope", token.scope ?? (token.requestedScope.isEmpty ? nil : token.requestedScope))
        json.raw("expires_at", AccountJSON.date(token.expiresAt))
        json.raw("issued_at", AccountJSON.date(token.issuedAt))
        return json.finish()
    }
}
