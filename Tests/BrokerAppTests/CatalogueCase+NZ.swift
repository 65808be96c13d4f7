import BrokerHTTP

/// The catalogue's cases from Notion to Zoom.
extension CatalogueCase {
    static let notion = CatalogueCase(
        preset: "notion",
        wire: Wire(
            authorizePath: "/api.notion.com/v1/oauth/authorize", tokenPath: "/api.notion.com/v1/oauth/token",
            userPath: nil, revokePath: "/api.notion.com/v1/oauth/revoke", clientAuth: .basic, jsonRequests: true,
            authorizeParameters: ["owner": "user"], pkce: false, headers: ["Notion-Version": "2025-09-03"], expiresIn: nil,
            answer: { issued in
                // Notion's answer has no expires_in.
                tokens(
                    issued, expires: false,
                    extra: """
                        "bot_id":"b3414d65-1224-4ff7-8ffe-cc9d8773d601","workspace_name":"Ada's workspace","workspace_icon":null,\
                        "workspace_id":"a4c1f5c6-2c4b-4e39-9a1e-0b8c6f1e2d3a","owner":{"type":"user","user":{"object":"user",\
                        "id":"5389a034-eb5c-47b5-8a9e-f79c99ef166c","name":"christine makenotion","avatar_url":null,"type":"person",\
                        "person":{"email":"christine@makenotion.com"}}},"duplicated_template_id":null,"request_id":"9f2d1c3e-8a4b-4c5d-9e6f-7a8b9c0d1e2f"
                        """)
            },
            revokeShape: .json, revokesAccessToken: true, revokeAnswer: (.ok, #"{"request_id":"3c90c3cc-0d44-4b50-8888-8dd25736052a"}"#),
            errorAnswer: { (.badRequest, "{\"object\":\"error\",\"status\":400,\"code\":\"\($0)\",\"message\":\"Invalid token.\"}") }
        ), uid: "a4c1f5c6-2c4b-4e39-9a1e-0b8c6f1e2d3a:5389a034-eb5c-47b5-8a9e-f79c99ef166c", screenName: "christine makenotion")

    static let reddit = CatalogueCase(
        preset: "reddit",
        wire: Wire(
            authorizePath: "/www.reddit.com/api/v1/authorize", tokenPath: "/www.reddit.com/api/v1/access_token",
            userPath: "/oauth.reddit.com/api/v1/me", revokePath: "/www.reddit.com/api/v1/revoke_token", clientAuth: .basic,
            scope: "identity", authorizeParameters: ["duration": "permanent"], pkce: false,
            headers: ["User-Agent": "web:token-broker:1.0 (OAuth token broker)"], expiresIn: 86_400,
            answer: { tokens($0, extra: #""scope":"identity""#) },
            userAnswer: #"{"id":"abc12","name":"spez","created_utc":1118030400.0,"verified":true}"#,
            revokeShape: .form(parameter: "token", client: .credentials), revokeAnswer: (.noContent, nil)
        ), rotates: false, uid: "abc12", screenName: "spez")

    static let salesforce = CatalogueCase(
        preset: "salesforce", environment: ["SALESFORCE_LOGIN_HOST": "test.salesforce.com"],
        wire: Wire(
            authorizePath: "/test.salesforce.com/services/oauth2/authorize", tokenPath: "/test.salesforce.com/services/oauth2/token",
            userPath: "/test.salesforce.com/services/oauth2/userinfo", revokePath: "/test.salesforce.com/services/oauth2/revoke",
            scope: "id api refresh_token", pkce: true, expiresIn: nil,
            answer: { issued in
                // No expires_in: the session lifetime is the org's policy.
                tokens(
                    issued, type: "Bearer", expires: false,
                    extra: """
                        "signature":"HfBA4xxxxSOUcg8ndBMnw4GuvDY1M+oWUQ8PU1l0HWbc=","scope":"id api refresh_token",\
                        "instance_url":"https://yourInstance.my.salesforce.com",\
                        "id":"https://test.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS","issued_at":"1278448101416"
                        """)
            },
            userAnswer: """
                {"sub":"https://test.salesforce.com/id/00Dxx0000001gPLEAY/005xx000001SwiUAAS","user_id":"005xx000001SwiUAAS",\
                "organization_id":"00Dxx0000001gPLEAY","preferred_username":"admin@example.com","name":"Admin User"}
                """,
            errorAnswer: { (.badRequest, "{\"error\":\"\($0)\",\"error_description\":\"expired access/refresh token\"}") }
        ), rotates: false, uid: "00Dxx0000001gPLEAY:005xx000001SwiUAAS", screenName: "Admin User")

    static let slack = CatalogueCase(
        preset: "slack",
        wire: Wire(
            authorizePath: "/slack.com/oauth/v2/authorize", tokenPath: "/slack.com/api/oauth.v2.access",
            userPath: nil, revokePath: "/slack.com/api/auth.revoke", clientAuth: .basic, scopeParameter: "user_scope",
            scope: "users:read", pkce: false, expiresIn: 43_200,
            answer: { issued in
                // The code answer nests the user token under authed_user; a refresh answer names the token at the top.
                let user = tokens(issued, type: "user", extra: #""id":"U1234","scope":"users:read""#)
                return issued.refreshing
                    ? tokens(issued, type: "user", extra: #""ok":true,"scope":"users:read","team":{"id":"T9TK3CUKW"}"#)
                    : #"{"ok":true,"app_id":"A0KRD7HC3","authed_user":"# + user
                        + #","team":{"id":"T9TK3CUKW","name":"Slack Softball Team"},"enterprise":null,"is_enterprise_install":false}"#
            },
            revokeShape: .bearer, revokesAccessToken: true, revokeAnswer: (.ok, #"{"ok":true,"revoked":true}"#),
            // Slack reports failures with HTTP 200 and ok: false; a spent refresh token is invalid_refresh_token.
            errorAnswer: { (.ok, "{\"ok\":false,\"error\":\"\($0 == "invalid_grant" ? "invalid_refresh_token" : $0)\"}") }
        ), uid: "T9TK3CUKW:U1234")

    static let spotify = CatalogueCase(
        preset: "spotify",
        wire: Wire(
            authorizePath: "/accounts.spotify.com/authorize", tokenPath: "/accounts.spotify.com/api/token",
            userPath: "/api.spotify.com/v1/me", revokePath: nil, clientAuth: .basic, scope: "user-read-private user-read-email",
            pkce: false,
            answer: { tokens($0, type: "Bearer", extra: #""scope":"user-read-private user-read-email""#) },
            userAnswer:
                #"{"id":"wizzler","display_name":"JM Wizzler","email":"email@example.com","type":"user","uri":"spotify:user:wizzler"}"#,
            errorAnswer: { (.badRequest, "{\"error\":\"\($0)\",\"error_description\":\"Invalid refresh token\"}") }
        ), uid: "wizzler", screenName: "JM Wizzler")

    static let strava = CatalogueCase(
        preset: "strava",
        wire: Wire(
            authorizePath: "/www.strava.com/oauth/authorize", tokenPath: "/www.strava.com/oauth/token",
            userPath: "/www.strava.com/api/v3/athlete", revokePath: "/www.strava.com/oauth/deauthorize", scope: "read", pkce: false,
            expiresIn: 21_600,
            answer: { issued in
                // Only the code answer carries the athlete; expires_at comes beside expires_in.
                let athlete =
                    issued.refreshing ? "" : #","athlete":{"id":134815,"username":"marianne_t","firstname":"Marianne","lastname":"T."}"#
                return tokens(issued, type: "Bearer", extra: #""expires_at":1568775134"# + athlete)
            },
            userAnswer: #"{"id":134815,"username":"marianne_t","firstname":"Marianne","lastname":"T."}"#,
            revokeShape: .form(parameter: "access_token", client: .none), revokesAccessToken: true,
            revokeAnswer: (.ok, #"{"access_token":"revoked"}"#)
        ), rotates: false, uid: "134815", screenName: "marianne_t")

    static let twitch = CatalogueCase(
        preset: "twitch",
        wire: Wire(
            authorizePath: "/id.twitch.tv/oauth2/authorize", tokenPath: "/id.twitch.tv/oauth2/token",
            userPath: "/id.twitch.tv/oauth2/validate", revokePath: "/id.twitch.tv/oauth2/revoke", scope: "user:read:email",
            pkce: false, expiresIn: 14_124,
            // `scope` is a JSON array here.
            answer: { tokens($0, extra: #""scope":["user:read:email"]"#) },
            userAsk: .header(scheme: "OAuth"),
            userAnswer:
                #"{"client_id":"wbmytr93xzw8zbg0p1izqyzzc5mbiz","login":"twitchdev","scopes":["user:read:email"],"user_id":"141981764","expires_in":5520838}"#,
            revokeShape: .form(parameter: "token", client: .clientID), revokesAccessToken: true,
            errorAnswer: { _ in (.badRequest, #"{"error":"Bad Request","status":400,"message":"Invalid refresh token"}"#) }
        ), uid: "141981764", screenName: "twitchdev", namesDeadRefreshTokens: false)

    static let zoom = CatalogueCase(
        preset: "zoom",
        wire: Wire(
            authorizePath: "/zoom.us/oauth/authorize", tokenPath: "/zoom.us/oauth/token",
            userPath: "/api.zoom.us/v2/users/me", revokePath: "/zoom.us/oauth/revoke", clientAuth: .basic, pkce: true,
            expiresIn: 3599,
            answer: { tokens($0, extra: #""scope":"user:read:user""#) },
            userAnswer:
                #"{"id":"KDcuGIm1QgePTO8WbOqwIQ","first_name":"Jill","last_name":"Chill","display_name":"Jill Chill","email":"jchill@example.com"}"#,
            revokeShape: .form(parameter: "token", client: .credentials), revokesAccessToken: true,
            revokeAnswer: (.ok, #"{"status":"success"}"#),
            errorAnswer: { (.badRequest, "{\"reason\":\"Invalid Token!\",\"error\":\"\($0)\"}") }
        ), uid: "KDcuGIm1QgePTO8WbOqwIQ", screenName: "Jill Chill")
}
