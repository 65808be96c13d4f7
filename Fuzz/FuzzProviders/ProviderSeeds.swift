#if FUZZING
import Foundation

/// The seed corpus of FuzzProviders: the providers' documented and observed answers, and the hostile ones found from outside.
///
/// Wire formats follow `reference/providers.md` §1–§4 and the fixtures in
/// `Tests/BrokerCoreTests/ProviderWire.swift`. libFuzzer reads at most
/// `-max_len` (8 KiB) of a seed, so the writer also runs every seed once at
/// full length: the 20 KB access token is checked whole there.
enum ProviderSeeds {
    /// One seed: the step, the answer's status, Content-Type and `Retry-After` source, and the payload.
    struct Seed {
        /// The client call.
        let step: ProviderFuzzCase.Step
        /// The answer's status.
        let status: Int
        /// The answer's Content-Type, nil for none.
        let contentType: String?
        /// Where `Retry-After` comes from.
        let retryAfter: ProviderAnswer.RetryAfterSource
        /// The payload: the body, after the `Retry-After` line when that comes first.
        let payload: String

        /// The raw fuzz input.
        var bytes: [UInt8] {
            ProviderFuzzCase.encode(
                step, parameter: ProviderAnswer.parameter(status: status, contentType: contentType, retryAfter: retryAfter),
                Array(payload.utf8))
        }
    }

    /// Writes every seed into `directory` (created if missing) and runs each once; returns 0, or 1 when a file cannot be written.
    static func write(to directory: String) -> Int32 {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let seeds = all
            for (index, seed) in seeds.enumerated() {
                let bytes = seed.bytes
                try Data(bytes).write(to: URL(fileURLWithPath: "\(directory)/\(seed.step)-\(index)"))
                ProviderFuzzCase(bytes).check()
            }
            print("FuzzProviders: \(seeds.count) seeds in \(directory), each checked once at full length")
            return 0
        } catch {
            FileHandle.standardError.write(Data("FuzzProviders --seeds: \(error)\n".utf8))
            return 1
        }
    }

    /// JSON, as providers label it.
    static let json = "application/json; charset=utf-8"
    /// Weibo's label for JSON.
    static let weiboJSON = "text/plain;charset=UTF-8"
    /// Twitter's label for form bodies.
    static let twitterForm = "text/html;charset=utf-8"

    /// ID token claims: a good set, then the ways a provider gets them wrong (OIDC Core §3.1.3.7), odd numbers among them.
    static let idTokenClaims: [String] = {
        let good = #""iss":"https://issuer.example","aud":"fuzz-client","nonce":"fuzz-nonce-SENTINEL""#
        return [
            "{\(good),\"sub\":\"248289761001\",\"exp\":1700000600,\"email\":\"jane@example.com\"}",
            "{\(good),\"sub\":\"248289761001\",\"exp\":1e308}",
            "{\(good),\"sub\":\"248289761001\",\"exp\":-1e308}",
            "{\(good),\"sub\":\"248289761001\",\"exp\":\"1700000600\"}",
            "{\(good),\"sub\":\"248289761001\",\"exp\":18446744073709551616}",
            "{\(good),\"sub\":\"\(String(repeating: "x", count: 256))\",\"exp\":1700000600}",
            "{\(good),\"sub\":\"a\\u0000b\",\"exp\":1700000600}",
            "{\(good),\"sub\":248289761001,\"exp\":1700000600}",
            #"{"iss":"https://issuer.example","aud":["fuzz-client","other"],"nonce":"fuzz-nonce-SENTINEL","sub":"1","exp":1700000600}"#,
            #"{"iss":"https://issuer.example","aud":["other"],"azp":"fuzz-client","nonce":"fuzz-nonce-SENTINEL","sub":"1","exp":1700000600}"#,
            #"{"iss":"https://evil.example","aud":"fuzz-client","nonce":"fuzz-nonce-SENTINEL","sub":"1","exp":1700000600}"#,
            "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.",
            "a.b.c.d.e",
        ]
    }()

    /// Every seed.
    static var all: [Seed] {
        var seeds: [Seed] = []
        func add(
            _ step: ProviderFuzzCase.Step, _ status: Int, _ type: String?, _ payload: String,
            retryAfter: ProviderAnswer.RetryAfterSource = .none
        ) {
            seeds.append(Seed(step: step, status: status, contentType: type, retryAfter: retryAfter, payload: payload))
        }
        for (status, type, body) in tokenAnswers {
            add(.exchange, status, type, body)
            add(.refresh, status, type, body)
        }
        for body in hostileLifetimes {
            add(.exchange, 200, weiboJSON, body)
            add(.refresh, 200, json, body)
        }
        for uid in hostileUIDs {
            add(.exchange, 200, weiboJSON, #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":86400,"uid":"\#(uid)"}"#)
            add(.userInfo, 200, json, #"{"login":"octocat","id":"\#(uid)","type":"User"}"#)
            add(.tmdbAccount, 200, json, #"{"id":"\#(uid)","username":"travisbell"}"#)
        }
        for uid in hostileUIDsInForm {
            add(
                .accessToken, 200, twitterForm,
                "oauth_token=6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY&oauth_token_secret=2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU&user_id=\(uid)&screen_name=twitterapi"
            )
        }
        // A 20 KB access token (over the 16 KiB bound, checked whole by the writer) and an 8000-byte one that fits in -max_len.
        for length in [20_000, 8_000] {
            let token = String(repeating: "a", count: length)
            add(.exchange, 200, json, #"{"access_token":"\#(token)","expires_in":3600,"uid":"3733034601"}"#)
            add(.refresh, 200, json, #"{"access_token":"\#(token)","expires_in":3600,"token_type":"Bearer"}"#)
            add(.accessToken, 200, twitterForm, "oauth_token=\(token)&oauth_token_secret=s&user_id=6253282")
        }
        for (status, field) in hostileRetryAfters {
            add(.refresh, status, json, field + "\n" + #"{"error":"temporarily_unavailable"}"#, retryAfter: .firstLine)
        }
        for source in ProviderAnswer.RetryAfterSource.allCases where source != .firstLine {
            add(.refresh, 503, "text/html;charset=utf-8", "<html><body><h1>503 Service Unavailable</h1></body></html>", retryAfter: source)
            add(.refresh, 429, json, #"{"error":"rate_limited"}"#, retryAfter: source)
        }
        for (status, type, body) in userAnswers { add(.userInfo, status, type, body) }
        for claims in idTokenClaims { add(.idToken, 200, json, claims) }
        // The exchange's user endpoint gets the same answer: a token answer without uid that is also a user object.
        add(.exchange, 200, weiboJSON, #"{"access_token":"2.00WsUooC2Qf7MD7939e77fc0pxQHIqC","expires_in":86400}"#)
        for (status, type, body) in requestTokenAnswers { add(.requestToken, status, type, body) }
        for (status, type, body) in accessTokenAnswers { add(.accessToken, status, type, body) }
        for (status, type, body) in tmdbAnswers {
            add(.tmdbRequestToken, status, type, body)
            add(.tmdbSession, status, type, body)
            add(.tmdbAccount, status, type, body)
        }
        for (status, type, body) in slackAnswers { add(.catalogueExchange, status, type, body) }
        for (status, type, body) in hubspotAnswers { add(.catalogueUserInfo, status, type, body) }
        for uid in hostileUIDs {
            add(.catalogueExchange, 200, json, #"{"ok":true,"authed_user":{"id":"\#(uid)","access_token":"xoxp-1"},"team":{"id":"T1"}}"#)
        }
        return seeds
    }

    /// Token endpoint answers: Weibo (doc, real, older, errors), GitHub (form, JSON, error with 200), Google, RFC 6749, an HTML page.
    static let tokenAnswers: [(Int, String?, String)] = [
        (200, weiboJSON, #"{"access_token":"ACCESS_TOKEN","expires_in":1234,"remind_in":"798114","uid":"12341234"}"#),
        (
            200, weiboJSON,
            #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","remind_in":"157679999","expires_in":157679999,"uid":"3733034601","isRealName":"true"}"#
        ),
        (200, weiboJSON, #"{"access_token":"2.00WsUooC2Qf7MD7939e77fc0pxQHIqC","expires_in":86400,"uid":"2583117564"}"#),
        (200, weiboJSON, #"{"access_token":"2.00abc","expires_in":86400,"uid":1073880650,"scope":"follow_app_official_microblog"}"#),
        (
            400, weiboJSON,
            #"{"error":"invalid_grant","error_code":21325,"request":"/oauth2/access_token","error_uri":"/oauth2/access_token","error_description":"invalid authorization code:0dd6ebdafc04f8402b4e75d8289dba14"}"#
        ),
        (
            401, weiboJSON,
            #"{"error":"invalid_client","error_code":21324,"request":"/oauth2/access_token","error_uri":"/oauth2/access_token","error_description":"client_secret error."}"#
        ),
        (200, weiboJSON, #"{"request":"/statuses/home_timeline.json","error_code":"20502","error":"Auth failed!"}"#),
        (
            200, "application/x-www-form-urlencoded",
            "access_token=gho_16C7e42F292c6912E7710c838347Ae178B4a&scope=repo%2Cgist&token_type=bearer"
        ),
        (200, json, #"{"access_token":"gho_16C7e42F292c6912E7710c838347Ae178B4a","scope":"repo,gist","token_type":"bearer"}"#),
        (
            200, json,
            #"{"error":"bad_verification_code","error_description":"The code passed is incorrect or expired.","error_uri":"/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code"}"#
        ),
        (200, json, #"{"error":"bad_refresh_token","error_description":"The refresh token passed is incorrect or expired."}"#),
        (
            200, json,
            #"{"access_token":"1/fFAGRNJru1FTz70BzhT3Zg","expires_in":3920,"token_type":"Bearer","scope":"https://www.googleapis.com/auth/drive.metadata.readonly https://www.googleapis.com/auth/calendar.readonly","refresh_token":"1//xEoDL4iW3cxlI7yDbSRFYNG01kVKM2C-259HOF2aQbI"}"#
        ),
        (400, json, #"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#),
        (
            200, json,
            #"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"example","expires_in":3600,"refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA","example_parameter":"example_value"}"#
        ),
        (400, json, #"{"error":"invalid_request"}"#),
        (503, "text/html;charset=utf-8", "<html><body><h1>502 Bad Gateway</h1></body></html>"),
        (204, nil, ""),
    ]

    /// Slack's `oauth.v2.access`: a user token, a bot-only install, rotation, `ok:false`, a colon in a joined part, a fraction.
    static let slackAnswers: [(Int, String?, String)] = [
        (
            200, json,
            #"{"ok":true,"app_id":"A0KRD7HC3","authed_user":{"id":"U1234","scope":"users:read","access_token":"xoxp-1234","token_type":"user"},"team":{"id":"T9TK3CUKW","name":"Slack Softball Team"},"enterprise":null,"is_enterprise_install":false}"#
        ),
        (
            200, json,
            #"{"ok":true,"access_token":"xoxb-17653672481","token_type":"bot","scope":"commands","bot_user_id":"U0KRQLJ9H","authed_user":{"id":"U1234"},"team":{"id":"T9TK3CUKW"}}"#
        ),
        (
            200, json,
            #"{"ok":true,"authed_user":{"id":"U1234","access_token":"xoxe.xoxp-1","refresh_token":"xoxe-1-abc","expires_in":43200,"token_type":"user"},"team":{"id":"T9TK3CUKW"}}"#
        ),
        (200, json, #"{"ok":false,"error":"invalid_code"}"#),
        (200, json, #"{"ok":true,"authed_user":{"id":"U:1","access_token":"xoxp-1"},"team":{"id":"T1"}}"#),
        (200, json, #"{"ok":true,"authed_user":{"id":1.5,"access_token":"xoxp-1"},"team":{"id":"T1"}}"#),
        (200, json, #"{"ok":true,"authed_user":{"id":"U1","access_token":"xoxp-1"},"team":null,"enterprise":{"id":"E1"}}"#),
    ]

    /// HubSpot's introspection answers: the documented one, ids as strings, a fraction, a number past 64 bits, inactive.
    static let hubspotAnswers: [(Int, String?, String)] = [
        (
            200, json,
            #"{"active":true,"token_use":"access_token","hub_id":62515,"user_id":123456,"user":"test@hubspot.com","hub_domain":"demo.hubapi.com","app_id":456,"scopes":["oauth"],"expires_in":1754,"token_type":"access"}"#
        ),
        (200, json, #"{"active":true,"hub_id":"62515","user_id":"123456"}"#),
        (200, json, #"{"active":true,"hub_id":62515.0,"user_id":123456}"#),
        (200, json, #"{"active":true,"hub_id":18446744073709551616,"user_id":1}"#),
        (200, json, #"{"active":false}"#),
        (
            400, json,
            #"{"category":"VALIDATION_ERROR","correlationId":"aeb5f871-7f07-4993-9211-075dc63e7cbf","message":"Token is invalid"}"#
        ),
    ]

    /// `expires_in` values found from outside: the largest Int64, negative, a float past any integer, digits past any integer.
    static let hostileLifetimes = [
        #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":9223372036854775807,"uid":"3733034601"}"#,
        #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":-1,"uid":"3733034601"}"#,
        #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":1e300,"uid":"3733034601"}"#,
        #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":"99999999999999999999","uid":"3733034601"}"#,
        #"{"access_token":"2.00Vp7dEEeYcbDB399a287a87jsJhJC","expires_in":2147483647,"uid":"3733034601"}"#,
    ]

    /// User ids found from outside, as JSON string contents: composed and decomposed é, 128 bytes of `/`, a right-to-left override.
    /// The last starts with a combining mark, which joined after `T1:` forms one Character with the colon.
    static let hostileUIDs = [
        #"caf\u00e9"#, "caf\u{e9}", #"cafe\u0301"#, "cafe\u{301}", String(repeating: "/", count: 128), #"\u202Eevil"#,
        #"\u102Eevil"#,
    ]

    /// The same ids percent-encoded for a form body.
    static let hostileUIDsInForm = ["caf%C3%A9", "cafe%CC%81", String(repeating: "%2F", count: 128), "%E2%80%AEevil"]

    /// `Retry-After` values found from outside, with the status that carries them.
    static let hostileRetryAfters: [(Int, String)] = [
        (503, "99999999999999999999"), (429, "Sun, 06 Nov 1994 08:49:37 GMT"), (503, "-5"),
        (503, "Sunday, 06-Nov-94 08:49:37 GMT"), (429, "Sun Nov  6 08:49:37 1994"), (500, " 120 "),
    ]

    /// User endpoint answers: GitHub, Google's userinfo, Weibo's get_uid both ways, refusals.
    static let userAnswers: [(Int, String?, String)] = [
        (200, json, #"{"login":"octocat","id":1,"node_id":"MDQ6VXNlcjE=","type":"User"}"#),
        (200, json, #"{"login":"octocat","id":18446744073709551615,"type":"User"}"#),
        (200, json, #"{"sub":"110169484474386276334","name":"Ada Lovelace","email":"ada@example.com","email_verified":true}"#),
        (200, weiboJSON, #"{"uid":"3456676543"}"#),
        (401, json, #"{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}"#),
        (200, json, #"{"error":"access_denied","error_code":21330,"request":"/2/account/profile/email.json"}"#),
    ]

    /// Twitter's `request_token` answers: the documented one, errors in JSON and XML, an unconfirmed callback.
    static let requestTokenAnswers: [(Int, String?, String)] = [
        (
            200, twitterForm,
            "oauth_token=Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik&oauth_token_secret=Kd75W4OQfb2oJTV0vzGzeXftVAwgMnEK9MumzYcM&oauth_callback_confirmed=true"
        ),
        (
            200, twitterForm,
            "oauth_token=Z6eEdO8MOmk394WozF5oKyuAv855l4Mlqo7hhlSLik&oauth_token_secret=Kd75W4OQfb2oJTV0vzGzeXftVAwgMnEK9MumzYcM"
        ),
        (401, json, #"{"errors":[{"code":32,"message":"Could not authenticate you."}]}"#),
        (
            401, json,
            #"{"errors":[{"code":415,"message":"Callback URL not approved for this client application. Approved callback URLs can be adjusted in your application settings"}]}"#
        ),
        (
            400, twitterForm,
            #"<?xml version="1.0" encoding="UTF-8"?><errors><error code="415">Callback URL not approved for this client application.</error></errors>"#
        ),
    ]

    /// Twitter's `access_token` answers: the documented one, a 401 in plain text, the old XML form, an expired token.
    static let accessTokenAnswers: [(Int, String?, String)] = [
        (
            200, twitterForm,
            "oauth_token=6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY&oauth_token_secret=2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU&user_id=6253282&screen_name=twitterapi"
        ),
        (
            200, twitterForm,
            "oauth_token=6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY&oauth_token_secret=2EEfA6BG5ly3sR3XjE0IBSnlQu4ZrUzPiYTmrkVU"
        ),
        (
            200, json,
            #"{"oauth_token":"6253282-eWudHldSbIaelX7swmsiHImEL4KinwaGloHANdrY","oauth_token_secret":"2EEf","id_str":"38895958","id":38895958,"screen_name":"theSeanCook"}"#
        ),
        (401, "text/plain;charset=UTF-8", "Error processing your OAuth request: Invalid oauth_verifier parameter"),
        (
            401, "text/html;charset=utf-8",
            "<hash><error>Invalid / expired Token</error><request>/oauth/access_token?oauth_verifier=x</request></hash>"
        ),
        (401, json, #"{"errors":[{"code":89,"message":"Invalid or expired token."}]}"#),
        (401, "application/x-www-form-urlencoded", "oauth_problem=token_rejected&oauth_problem_advice=try%20again"),
    ]

    /// TMDB v3 answers: request token, session, account, logout, and its three error shapes.
    static let tmdbAnswers: [(Int, String?, String)] = [
        (
            200, json,
            #"{"success": true,"expires_at": "2016-08-26 17:04:39 UTC","request_token": "ff5c7eeb5a8870efe3cd7fc5c282cffd26800ecd"}"#
        ),
        (200, json, #"{"success": true,"session_id": "79191836ddaa0da3df76a5ffef6f07ad6ab0c641"}"#),
        (
            200, json,
            #"{"avatar":{"gravatar":{"hash":"c9e9fc152ee756a900db85757c29815d"},"tmdb":{"avatar_path":"/xy44UvpbTgzs9kWmp4C3fEaCl5h.png"}},"id":548,"iso_639_1":"en","iso_3166_1":"CA","name":"Travis Bell","include_adult":false,"username":"travisbell"}"#
        ),
        (200, json, #"{"success":true,"session_id":"79191836ddaa0da3df76a5ffef6f07ad6ab0c641","id":548,"username":"travisbell"}"#),
        (200, json, #"{"success": true}"#),
        (401, json, #"{"status_code":7,"status_message":"Invalid API key: You must be granted a valid key.","success":false}"#),
        (
            401, json,
            #"{"success":false,"status_code":33,"status_message":"Invalid request token: The request token is either expired or invalid."}"#
        ),
        (200, json, #"{"failure":true,"status_code":17,"status_message":"Session denied."}"#),
    ]
}
#endif
