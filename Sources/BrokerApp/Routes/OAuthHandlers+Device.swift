import BrokerCore
import BrokerHTTP
import Foundation

extension OAuthHandlers {
    /// `POST /device/authorize` (API key, scope `connect`): starts a device sign-in (RFC 8628) and answers
    /// `{user_code, verification_uri, verification_uri_complete, expires_at, interval, state}`.
    ///
    /// The body is a JSON object: `provider` (required), `end_user_id`, `end_user_email`, `end_user_name`, `tags`
    /// and `scopes` (an array, or one space-separated string), checked as for `POST /authorize` and connect sessions, and
    /// `settings` (the provider's per-account settings, checked before the provider is asked for codes).
    /// The broker then polls the provider itself; the outcome comes through `GET /flows/{state}` and the flow webhooks.
    /// A device answer that fails its checks (a missing field, an interval out of range, an `http:` verification URI)
    /// is a 502 `upstream_error` naming the field.
    func authorizeDevice(_ request: Request) async -> Response {
        do {
            let caller = try access.authorize(request, .connect)
            try StrictInput.query(request, allowed: [])
            let body = try ConnectSessionHandlers.jsonObject(request)
            try StrictInput.fields(
                Array(body.keys), allowed: ["provider", "end_user_id", "end_user_email", "end_user_name", "tags", "scopes", "settings"])
            guard let provider = try ConnectSessionHandlers.string(body, "provider") else {
                throw BrokerError.badRequest("The provider field is required.")
            }
            let owner = try OwnerParameters.owner(RequestForm(request))
            try caller.grant.require(provider: registry.provider(named: provider)?.name ?? provider)
            try caller.grant.require(endUser: owner.endUser?.id)
            let start = try await authorization.beginDevice(
                provider: provider, endUser: owner.endUser, tags: owner.tags, scopes: try ConnectSessionHandlers.scopes(body),
                settings: try CredentialHandlers.settings(body["settings"]))
            logger.log(.info, "device sign-in started", [("provider", .string(provider))])
            return Response.json(
                .ok,
                AccountJSON.object([
                    ("user_code", JSONString.quote(start.userCode)), ("verification_uri", JSONString.quote(start.verificationURI)),
                    ("verification_uri_complete", start.verificationURIComplete.map(JSONString.quote) ?? "null"),
                    ("expires_at", AccountJSON.date(start.expiresAt)), ("interval", String(start.interval)),
                    ("state", JSONString.quote(start.state)),
                ]), headers: Self.noStore())
        } catch {
            return failure(error, event: "device sign-in failed")
        }
    }
}
