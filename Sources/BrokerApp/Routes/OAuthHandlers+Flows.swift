import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

extension OAuthHandlers {
    /// The path prefix of `GET /flows/{state}`.
    static let flowsPrefix = "/flows/"

    /// `GET /flows/{state}` (API key): whether the flow is pending, or how it ended.
    ///
    /// Answers `pending`, `completed` (with the account id), `failed` (with the
    /// error code the browser saw) or `expired`, on every replica, until
    /// `BROKER_FLOW_TTL` after the flow ended. A state that is not base64url of
    /// at most 128 characters is a 400; one never started, or gone longer than
    /// that, a 404. Nothing secret of the flow is in the answer.
    func flow(_ request: Request) async -> Response {
        do {
            _ = try access.authorize(request, .accountsRead)
            try StrictInput.query(request, allowed: [])
        } catch { return error.response }
        let state = String(request.path.dropFirst(Self.flowsPrefix.count))
        guard Self.isPlausibleState(state) else {
            return BrokerError.badRequest("The state in the path must be 1 to 128 base64url characters.").response
        }
        do {
            guard let outcome = try await authorization.outcome(state: state) else {
                return Response.error(
                    .notFound, code: "not_found",
                    message: "No flow with this state is known: never started, or ended longer ago than the flow TTL.",
                    headers: Self.noStore())
            }
            return Response.json(.ok, Self.json(outcome), headers: Self.noStore())
        } catch {
            return failure(error, event: nil)
        }
    }

    /// Whether `state` could be a state the broker made: 1–128 base64url characters (RFC 4648 §5).
    static func isPlausibleState(_ state: String) -> Bool {
        Base64URL.isAlphabet(state, count: 1...128)
    }

    /// The JSON answer for `outcome`, every member present (null when it does not apply).
    static func json(_ outcome: FlowOutcome) -> String {
        AccountJSON.object([
            ("state", JSONString.quote(outcome.state)), ("status", JSONString.quote(outcome.status.rawValue)),
            ("provider", JSONString.quote(outcome.provider)),
            ("account", outcome.accountID.map { JSONString.quote($0.string) } ?? "null"),
            ("end_user_id", outcome.endUserID.map(JSONString.quote) ?? "null"),
            ("tags", AccountJSON.tags(outcome.tags)),
            ("error", outcome.error.map(JSONString.quote) ?? "null"),
            ("expires_at", AccountJSON.date(outcome.expiresAt)), ("ended_at", AccountJSON.date(outcome.endedAt)),
        ])
    }
}
