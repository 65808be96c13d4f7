import Foundation

/// The guard at every step of a provider call: each check that fails is named, and nothing the provider sent is echoed.
///
/// Order: transport errors are thrown by the client before this runs;
/// then a 2xx status, a non-empty body, a JSON object (or a form-encoded body,
/// GitHub's default), no provider error fields even with HTTP 200 (`error`,
/// Weibo's numeric or string `error_code`), and finally the wanted key.
public enum OAuth2ResponseValidator {
    /// The token grant in `response`, laid out as `layout` says, or ``BrokerError/upstreamError(step:reason:)`` naming the failed check.
    ///
    /// RFC 6749 §5.1: `access_token` is required; `expires_in`, when present, is
    /// a number of seconds. The tokens are read from the object at
    /// ``TokenAnswerLayout/tokensAt`` when it holds an `access_token` (Slack's
    /// `authed_user`), else from the top level; the user is read from the whole answer.
    public static func tokenGrant(
        from response: UpstreamResponse, step: String,
        layout: TokenAnswerLayout = TokenAnswerLayout()
    ) throws(BrokerError) -> TokenGrant {
        let answer = try checkedFields(of: response, step: step, acceptForm: true)
        let fields = tokenFields(in: answer, at: layout.tokensAt)
        guard let accessToken = fields["access_token"] as? String, !accessToken.isEmpty else {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) response has no access_token")
        }
        try checkToken(accessToken, field: "access_token", step: step)
        let refreshToken = ProviderValue.text(fields["refresh_token"])
        if let refreshToken { try checkToken(refreshToken, field: "refresh_token", step: step) }
        let scope = ProviderValue.scope(fields["scope"])
        if let scope, scope.utf8.count > maximumScopeBytes {
            throw .upstreamError(step: step, reason: "scope is longer than \(maximumScopeBytes) bytes")
        }
        var expiresIn: Int?
        if let raw = fields["expires_in"], !(raw is NSNull) {
            expiresIn = try lifetime(raw, field: "expires_in", step: step)
        }
        var refreshTokenExpiresIn: Int?
        if let raw = fields["refresh_token_expires_in"], !(raw is NSNull) {
            refreshTokenExpiresIn = try lifetime(raw, field: "refresh_token_expires_in", step: step)
        }
        // The member the layout reads tokens from may hold one (Slack's `authed_user`), so it is never kept.
        let (idToken, extras, extrasDropped) = TokenExtras.split(answer, tokensAt: layout.tokensAt.flatMap(Self.topMember))
        var grant = TokenGrant(
            accessToken: Secret(accessToken),
            tokenType: ProviderValue.text(fields["token_type"]).flatMap { $0.utf8.count <= 64 ? $0 : nil },
            scope: scope,
            refreshToken: refreshToken.map(Secret.init),
            expiresIn: expiresIn,
            uid: userID(in: answer, layout: layout),
            screenName: ProviderValue.displayName(
                layout.userNameField.map { ProviderJSONPath($0).value(in: answer) } ?? answer["screen_name"]),
            refreshTokenExpiresIn: refreshTokenExpiresIn,
            idToken: idToken.map(Secret.init),
            extras: extras
        )
        grant.extrasDropped = extrasDropped
        return grant
    }

    /// The first member name of a JSON path (`authed_user` of `authed_user.access_token`).
    static func topMember(_ path: String) -> String? {
        path.split(separator: ".", maxSplits: 1).first.map(String.init)
    }

    /// The object holding the tokens: the one at `path` when it has an `access_token`, else the whole answer.
    static func tokenFields(in answer: [String: Any], at path: String?) -> [String: Any] {
        guard let path, let object = ProviderJSONPath(path).value(in: answer) as? [String: Any],
            let token = object["access_token"], !ProviderValue.isNull(token)
        else { return answer }
        return object
    }

    /// The user the answer names: at the layout's paths (exact ids only), or by default `uid`, else `user_id`.
    static func userID(in answer: [String: Any], layout: TokenAnswerLayout) -> String? {
        guard let fields = layout.userIDFields else {
            return ProviderValue.identifier(answer["uid"]) ?? ProviderValue.identifier(answer["user_id"])
        }
        return ProviderJSONPath.userID(at: fields.map(ProviderJSONPath.init), in: answer)
    }

    /// The longest access or refresh token kept, in bytes: far above any provider's (JWTs with group claims
    /// reach a few KiB), low enough that one answer cannot make every record it lands in large.
    static let maximumTokenBytes = 16_384
    /// The longest granted scope kept, in bytes.
    static let maximumScopeBytes = 4_096

    /// Refuses a token the broker could not hand on intact: over ``maximumTokenBytes`` or with control
    /// characters (it becomes part of an `Authorization` header, RFC 6750 §2.1).
    static func checkToken(_ token: String, field: String, step: String) throws(BrokerError) {
        if token.utf8.count > maximumTokenBytes {
            throw .upstreamError(step: step, reason: "\(field) is longer than \(maximumTokenBytes) bytes")
        }
        if token.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
            throw .upstreamError(step: step, reason: "\(field) has control characters")
        }
    }

    /// A token lifetime in seconds as the provider sent it, range-checked where it enters.
    ///
    /// RFC 6749 §5.1 says only "the lifetime in seconds". A negative lifetime is
    /// refused (502 naming the field); one longer than
    /// ``TokenGrant/maximumLifetime`` (ten years) is clamped to it, since some
    /// providers write "does not expire" as `2147483647` or larger. Nothing past
    /// this point sees a number that could overflow a date.
    static func lifetime(_ raw: Any, field: String, step: String) throws(BrokerError) -> Int {
        guard let seconds = ProviderValue.integer(raw) else {
            throw .upstreamError(step: step, reason: "\(field) is not a whole number of seconds")
        }
        guard seconds >= 0 else {
            throw .upstreamError(step: step, reason: "\(field) is negative")
        }
        return min(seconds, TokenGrant.maximumLifetime)
    }

    /// The JSON object in `response` (user info, revocation answers), after the same status, body and error-field checks.
    public static func jsonObject(from response: UpstreamResponse, step: String) throws(BrokerError) -> [String: Any] {
        try checkedFields(of: response, step: step, acceptForm: false)
    }

    /// Runs every check up to the wanted key and returns the body's fields.
    static func checkedFields(of response: UpstreamResponse, step: String, acceptForm: Bool) throws(BrokerError) -> [String: Any] {
        let body = ResponseBody(response.body)
        guard (200..<300).contains(response.status) else {
            let summary = body.fields(acceptForm: true).flatMap(ProviderErrorSummary.init(fields:))
            let suffix = summary.map { " with \($0)" } ?? ""
            throw .upstreamError(step: step, reason: "HTTP \(response.status) (not a 2xx status)\(suffix)")
        }
        guard !body.isBlank else {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) with an empty body")
        }
        let fields: [String: Any]
        switch body.parse(acceptForm: acceptForm) {
        case .object(let object):
            fields = object
        case .notAnObject:
            throw .upstreamError(step: step, reason: "the JSON body is not an object")
        case .invalidJSON:
            throw .upstreamError(step: step, reason: "the body is not valid JSON")
        case .notJSON:
            let type = ProviderValue.mediaType(response.header("Content-Type")) ?? "no content type"
            throw .upstreamError(step: step, reason: "the body is not JSON (\(type))")
        }
        // sinaweibopy treats any `error_code` as an error even with HTTP 200; GitHub sends `error` with HTTP 200.
        if let summary = ProviderErrorSummary(fields: fields) {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) with \(summary)")
        }
        return fields
    }
}

extension OAuth2ResponseValidator {
    /// Accepts a revocation answer: a 2xx status, and a body that is empty or holds no error and no false `result`.
    ///
    /// RFC 7009 §2.2: the content of a 200 answer is ignored by the client;
    /// Weibo, however, reports errors with `error_code` and success with `{"result":"true"}`.
    static func checkRevocation(_ response: UpstreamResponse, step: String) throws(BrokerError) {
        guard (200..<300).contains(response.status) else {
            _ = try checkedFields(of: response, step: step, acceptForm: false)  // throws the non-2xx error
            return
        }
        guard let fields = ResponseBody(response.body).fields(acceptForm: false) else { return }
        if let summary = ProviderErrorSummary(fields: fields) {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) with \(summary)")
        }
        if let result = fields["result"], ProviderValue.isFalse(result) {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) with result false")
        }
    }
}
