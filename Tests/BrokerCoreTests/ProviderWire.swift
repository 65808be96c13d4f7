import BrokerCore

/// Provider answers in their real wire formats (reference/providers.md §1 and §4).
enum ProviderWire {
    /// A response with `status`, `contentType` and `body`.
    static func response(_ status: Int, _ contentType: String?, _ body: String) -> UpstreamResponse {
        UpstreamResponse(status: status, headers: contentType.map { [("Content-Type", $0)] } ?? [], body: Array(body.utf8))
    }

    /// Weibo's token answer: JSON labelled `text/plain`, `uid` a string, `expires_in` a number, `remind_in` a string.
    static func weiboToken(accessToken: String, uid: String = "3733034601") -> UpstreamResponse {
        response(
            200, "text/plain;charset=UTF-8",
            #"{"access_token":"\#(accessToken)","remind_in":"157679999","expires_in":157679999,"uid":"\#(uid)","isRealName":"true"}"#)
    }

    /// Weibo's answer to a bad code: HTTP 400 whose description repeats the code.
    static func weiboInvalidGrant(code: String) -> UpstreamResponse {
        response(
            400, "text/plain;charset=UTF-8",
            #"{"error":"invalid_grant","error_code":21325,"request":"/oauth2/access_token","error_uri":"/oauth2/access_token","error_description":"invalid authorization code:\#(code)"}"#
        )
    }

    /// Weibo's answer to a wrong client secret: HTTP 401.
    static let weiboInvalidClient = response(
        401, "text/plain;charset=UTF-8",
        #"{"error":"invalid_client","error_code":21324,"request":"/oauth2/access_token","error_uri":"/oauth2/access_token","error_description":"client_secret error."}"#
    )

    /// Weibo's `get_uid.json`, with the uid as a JSON string or a number.
    static func weiboUID(_ uid: String, asNumber: Bool) -> UpstreamResponse {
        response(200, "text/plain;charset=UTF-8", asNumber ? #"{"uid":\#(uid)}"# : #"{"uid":"\#(uid)"}"#)
    }

    /// Weibo's successful `revokeoauth2`.
    static let weiboRevoked = response(200, "text/plain;charset=UTF-8", #"{"result":"true"}"#)

    /// GitHub's default token answer: form-encoded.
    static func githubTokenForm(accessToken: String) -> UpstreamResponse {
        response(200, "application/x-www-form-urlencoded; charset=utf-8", "access_token=\(accessToken)&scope=repo%2Cgist&token_type=bearer")
    }

    /// GitHub's token answer with `Accept: application/json`.
    static func githubTokenJSON(accessToken: String) -> UpstreamResponse {
        response(200, "application/json; charset=utf-8", #"{"access_token":"\#(accessToken)","scope":"repo,gist","token_type":"bearer"}"#)
    }

    /// GitHub's answer to a bad code: an error with HTTP 200.
    static let githubBadVerificationCode = response(
        200, "application/json; charset=utf-8",
        #"{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired.","error_uri":"/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code"}"#
    )

    /// GitHub's `/user`, with a numeric id.
    static func githubUser(id: Int = 1, login: String = "octocat") -> UpstreamResponse {
        response(200, "application/json; charset=utf-8", #"{"login":"\#(login)","id":\#(id),"node_id":"MDQ6VXNlcjE=","type":"User"}"#)
    }

    /// Google's token answer with a refresh token, and an ID token when given (a code exchange's).
    static func googleToken(accessToken: String, refreshToken: String?, expiresIn: Int = 3920, idToken: String? = nil) -> UpstreamResponse {
        let refresh = refreshToken.map { #","refresh_token":"\#($0)""# } ?? ""
        let id = idToken.map { #","id_token":"\#($0)""# } ?? ""
        return response(
            200, "application/json; charset=utf-8",
            #"{"access_token":"\#(accessToken)","expires_in":\#(expiresIn),"token_type":"Bearer","scope":"openid https://www.googleapis.com/auth/userinfo.email"\#(refresh)\#(id)}"#
        )
    }

    /// Google's OpenID userinfo.
    static func googleUserinfo(sub: String = "110169484474386276334") -> UpstreamResponse {
        response(
            200, "application/json; charset=utf-8",
            #"{"sub":"\#(sub)","name":"Ada Lovelace","email":"ada@example.com","email_verified":true}"#)
    }

    /// A load balancer's HTML error page.
    static let htmlError = response(502, "text/html; charset=UTF-8", "<html><body><h1>502 Bad Gateway</h1></body></html>")
}
