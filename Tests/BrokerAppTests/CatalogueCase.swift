import BrokerFakeProviders
import BrokerHTTP
import Testing

/// One preset of the catalogue as its end-to-end test drives it: the wire format its fake speaks and what the broker must make of it.
///
/// Field names, status codes, error shapes and sample values follow the
/// provider's documentation (docs/providers.md cites the pages); tokens are
/// the fake's sentinels so no test log may contain one.
struct CatalogueCase: Sendable, CustomTestStringConvertible {
    /// The preset name, and its credential variables' prefix in capitals.
    let preset: String
    /// Endpoint variables set beside the two credentials.
    var environment: [String: String] = [:]
    /// How the provider speaks OAuth 2.0: the fake provider is configured from it.
    let wire: Wire
    /// Whether the fake spends a refresh token on use and answers with its successor (else the refresh answer has none).
    var rotates = true
    /// The account's uid.
    let uid: String
    /// The account's display name, when the provider gives one.
    var screenName: String?
    /// Whether the broker recognizes the provider's answer to a dead refresh token as one (else it is a transient error).
    var namesDeadRefreshTokens = true

    /// What tells this case from another of the same preset.
    var variant: String?

    var testDescription: String { variant.map { preset + " (" + $0 + ")" } ?? preset }

    /// The RFC 6749 §5.1 fields of `issued`, with `extra` JSON members appended (no leading comma).
    static func tokens(_ issued: FakeOAuth2Provider.TokenAnswer, type: String = "bearer", expires: Bool = true, extra: String = "")
        -> String
    {
        var body = "{\"access_token\":\"\(issued.accessToken)\",\"token_type\":\"\(type)\""
        if expires { body += ",\"expires_in\":\(issued.expiresIn)" }
        if let refresh = issued.refreshToken { body += ",\"refresh_token\":\"\(refresh)\"" }
        return body + (extra.isEmpty ? "" : "," + extra) + "}"
    }

    static let all: [CatalogueCase] = [
        asana, atlassian, bitbucket, box, discord, dropbox, figma, gitlab, hubspot, linear,
        linkedin, microsoft, microsoftTenantID, notion, reddit, salesforce, slack, spotify, strava, twitch, zoom,
    ]

    static let asana = CatalogueCase(
        preset: "asana",
        wire: Wire(
            authorizePath: "/app.asana.com/-/oauth_authorize", tokenPath: "/app.asana.com/-/oauth_token",
            userPath: "/app.asana.com/api/1.0/users/me", revokePath: nil, pkce: true,
            answer: { issued in
                tokens(
                    issued,
                    extra: issued.refreshing
                        ? "" : #""data":{"id":4673218951,"gid":"4673218951","name":"Greg Sanchez","email":"gsanchez@example.com"}"#)
            },
            userAnswer: #"{"data":{"gid":"4673218951","name":"Greg Sanchez","resource_type":"user"}}"#
        ), rotates: false, uid: "4673218951", screenName: "Greg Sanchez")

    static let atlassian = CatalogueCase(
        preset: "atlassian",
        wire: Wire(
            authorizePath: "/auth.atlassian.com/authorize", tokenPath: "/auth.atlassian.com/oauth/token",
            userPath: "/api.atlassian.com/me", revokePath: nil, jsonRequests: true, scope: "read:me offline_access",
            authorizeParameters: ["audience": "api.atlassian.com", "prompt": "consent"], pkce: false,
            answer: { tokens($0, type: "Bearer", extra: #""scope":"read:me offline_access""#) },
            userAnswer:
                #"{"account_type":"atlassian","account_id":"112233aa-bb11-cc22-33dd-444444eeeeee","email":"mia@example.com","name":"Mia Krystof","nickname":"mkrystof"}"#,
            // Atlassian's "Get the cloudid for your site": an array of the sites the token reaches.
            resources: [
                "/api.atlassian.com/oauth/token/accessible-resources":
                    #"[{"id":"1324a887-45db-1bf4-1e99-ef0ff456d421","name":"Site name","url":"https://your-domain.atlassian.net","scopes":["read:me"],"avatarUrl":"https://site-admin-avatar-cdn.prod.public.atl-paas.net/avatars/240/flag.png"}]"#
            ],
            errorAnswer: { (.forbidden, "{\"error\":\"\($0)\",\"error_description\":\"Unknown or invalid refresh token.\"}") }
        ), uid: "112233aa-bb11-cc22-33dd-444444eeeeee", screenName: "Mia Krystof")

    static let bitbucket = CatalogueCase(
        preset: "bitbucket",
        wire: Wire(
            authorizePath: "/bitbucket.org/site/oauth2/authorize", tokenPath: "/bitbucket.org/site/oauth2/access_token",
            userPath: "/api.bitbucket.org/2.0/user", revokePath: nil, clientAuth: .basic, pkce: false, expiresIn: 7200,
            answer: { tokens($0, extra: #""scopes":"account","state":"authorization_code""#) },
            userAnswer:
                #"{"type":"user","uuid":"{d301aafa-d676-4ee0-88be-962be7417567}","account_id":"557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443","display_name":"Emma","nickname":"emma"}"#
        ), uid: "{d301aafa-d676-4ee0-88be-962be7417567}", screenName: "Emma")

    static let box = CatalogueCase(
        preset: "box",
        wire: Wire(
            authorizePath: "/account.box.com/api/oauth2/authorize", tokenPath: "/api.box.com/oauth2/token",
            userPath: "/api.box.com/2.0/users/me", revokePath: "/api.box.com/oauth2/revoke", pkce: false,
            answer: { tokens($0, extra: #""restricted_to":[]"#) },
            userAnswer: #"{"id":"11446498","type":"user","name":"Aaron Levie","login":"ceo@example.com"}"#,
            revokeShape: .form(parameter: "token", client: .credentials)
        ), uid: "11446498", screenName: "Aaron Levie")

    static let discord = CatalogueCase(
        preset: "discord",
        wire: Wire(
            authorizePath: "/discord.com/oauth2/authorize", tokenPath: "/discord.com/api/oauth2/token",
            userPath: "/discord.com/api/users/@me", revokePath: "/discord.com/api/oauth2/token/revoke", clientAuth: .basic,
            scope: "identify", pkce: true, expiresIn: 604_800,
            answer: { tokens($0, type: "Bearer", extra: #""scope":"identify""#) },
            userAnswer: #"{"id":"80351110224678912","username":"nelly","discriminator":"0","global_name":"Nelly","avatar":null}"#,
            revokeShape: .form(parameter: "token", client: .credentials)
        ), uid: "80351110224678912", screenName: "nelly")

    static let dropbox = CatalogueCase(
        preset: "dropbox",
        wire: Wire(
            authorizePath: "/www.dropbox.com/oauth2/authorize", tokenPath: "/api.dropboxapi.com/oauth2/token",
            userPath: nil, revokePath: "/api.dropboxapi.com/2/auth/token/revoke", clientAuth: .basic, scope: "account_info.read",
            authorizeParameters: ["token_access_type": "offline"], pkce: true, expiresIn: 14_400,
            answer: { issued in
                // The answer also carries `uid`, which the preset must not take for the user: `account_id` is the id.
                tokens(
                    issued,
                    extra: issued.refreshing
                        ? "" : #""scope":"account_info.read","account_id":"dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc","uid":"12345""#)
            },
            revokeShape: .bearer, revokesAccessToken: true, revokeAnswer: (.ok, "null")
        ), rotates: false, uid: "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc")

    static let figma = CatalogueCase(
        preset: "figma",
        wire: Wire(
            authorizePath: "/www.figma.com/oauth", tokenPath: "/api.figma.com/v1/oauth/token",
            refreshPath: "/api.figma.com/v1/oauth/refresh", userPath: "/api.figma.com/v1/me", revokePath: nil, clientAuth: .basic,
            scope: "current_user:read", pkce: false, expiresIn: 7_776_000,
            answer: { issued in
                var body = "{\"access_token\":\"\(issued.accessToken)\",\"expires_in\":\(issued.expiresIn)"
                if let refresh = issued.refreshToken { body += ",\"refresh_token\":\"\(refresh)\"" }
                return body + (issued.refreshing ? "}" : ",\"user_id_string\":\"1234567\"}")
            },
            userAnswer: #"{"id":"1234567","handle":"Ada","email":"ada@example.com","img_url":"https://example.com/a.png"}"#
        ), rotates: false, uid: "1234567", screenName: "Ada")

    static let gitlab = CatalogueCase(
        preset: "gitlab", environment: ["GITLAB_URL": "https://git.example.com/gitlab/"],
        wire: Wire(
            authorizePath: "/git.example.com/gitlab/oauth/authorize", tokenPath: "/git.example.com/gitlab/oauth/token",
            userPath: "/git.example.com/gitlab/api/v4/user", revokePath: "/git.example.com/gitlab/oauth/revoke",
            scope: "read_user", pkce: true, expiresIn: 7200,
            answer: { tokens($0, type: "Bearer", extra: #""scope":"read_user","created_at":1607635748"#) },
            userAnswer: #"{"id":1,"username":"john_smith","name":"John Smith","state":"active"}"#,
            revokeShape: .form(parameter: "token", client: .credentials), revokeAnswer: (.ok, "{}")
        ), uid: "1", screenName: "john_smith")

    static let hubspot = CatalogueCase(
        preset: "hubspot",
        wire: Wire(
            authorizePath: "/app.hubspot.com/oauth/authorize", tokenPath: "/api.hubapi.com/oauth/v3/token",
            userPath: "/api.hubapi.com/oauth/v3/token/introspect", revokePath: nil, scope: "oauth", pkce: true, expiresIn: 1800,
            answer: { tokens($0) },
            userAsk: .introspection,
            userAnswer:
                #"{"active":true,"token_use":"access_token","hub_id":62515,"user_id":123456,"user":"test@hubspot.com","hub_domain":"demo.hubapi.com","app_id":456,"scopes":["oauth"],"expires_in":1754,"token_type":"access"}"#,
            errorAnswer: { _ in
                (
                    .badRequest,
                    #"{"status":"BAD_REFRESH_TOKEN","message":"missing or unknown refresh token","correlationId":"aeb5f871-7f07-4993-9211-075dc63e7cbf"}"#
                )
            }
        ), uid: "62515:123456", screenName: "test@hubspot.com", namesDeadRefreshTokens: false)

    static let linear = CatalogueCase(
        preset: "linear",
        wire: Wire(
            authorizePath: "/linear.app/oauth/authorize", tokenPath: "/api.linear.app/oauth/token",
            userPath: "/api.linear.app/graphql", revokePath: nil, scope: "read", pkce: true, expiresIn: 86_399,
            answer: { tokens($0, type: "Bearer", extra: #""scope":"read""#) },
            userAsk: .jsonPost(containing: "viewer"),
            userAnswer: #"{"data":{"viewer":{"id":"b0f1c9fc-4b9e-4d1f-9a43-0c8a5b1d2e3f","name":"Jane Doe"}}}"#
        ), uid: "b0f1c9fc-4b9e-4d1f-9a43-0c8a5b1d2e3f", screenName: "Jane Doe")

    static let linkedin = CatalogueCase(
        preset: "linkedin",
        wire: Wire(
            authorizePath: "/www.linkedin.com/oauth/v2/authorization", tokenPath: "/www.linkedin.com/oauth/v2/accessToken",
            userPath: "/api.linkedin.com/v2/userinfo", revokePath: nil, scope: "openid profile email", pkce: false,
            issuesRefreshTokens: false, expiresIn: 5_184_000,
            answer: {
                tokens(
                    $0, type: "Bearer", extra: #""scope":"email,openid,profile","id_token":"eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e30.c2ln""#
                )
            },
            userAnswer:
                #"{"sub":"782bbtaQ","name":"John Doe","given_name":"John","family_name":"Doe","email":"doe@email.com","email_verified":true,"locale":"en-US"}"#
        ), uid: "782bbtaQ", screenName: "John Doe")

    /// Microsoft with a tenant id: OpenID Connect from the tenant's discovery document (written in lowercase,
    /// as Entra writes its issuers), the ID token checked, and the account still Graph's `id`, not the token's `sub`.
    static let microsoftTenantID = CatalogueCase(
        preset: "microsoft", environment: ["MICROSOFT_TENANT": "AAAABBBB-0000-CCCC-1111-DDDD2222EEEE"],
        wire: Wire(
            authorizePath: "/login.microsoftonline.com/aaaabbbb-0000-cccc-1111-dddd2222eeee/oauth2/v2.0/authorize",
            tokenPath: "/login.microsoftonline.com/aaaabbbb-0000-cccc-1111-dddd2222eeee/oauth2/v2.0/token",
            userPath: "/graph.microsoft.com/v1.0/me", revokePath: nil, scope: "openid profile email offline_access User.Read", pkce: true,
            expiresIn: 3599,
            userAnswer:
                #"{"id":"87d349ed-44d7-43e1-9a83-5f2406dee5bd","displayName":"Megan Bowen","userPrincipalName":"MeganB@contoso.com"}"#,
            openIDIssuer: "https://login.microsoftonline.com/aaaabbbb-0000-cccc-1111-dddd2222eeee/v2.0",
            errorAnswer: {
                (
                    .badRequest,
                    "{\"error\":\"\($0)\",\"error_description\":\"AADSTS70000: The provided value for the grant is invalid.\",\"error_codes\":[70000]}"
                )
            }
        ), uid: "87d349ed-44d7-43e1-9a83-5f2406dee5bd", screenName: "Megan Bowen", variant: "tenant id")

    static let microsoft = CatalogueCase(
        preset: "microsoft", environment: ["MICROSOFT_TENANT": "contoso.onmicrosoft.com"],
        wire: Wire(
            authorizePath: "/login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize",
            tokenPath: "/login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
            userPath: "/graph.microsoft.com/v1.0/me", revokePath: nil, scope: "openid profile email offline_access User.Read", pkce: true,
            expiresIn: 3599,
            answer: {
                tokens(
                    $0, type: "Bearer",
                    extra:
                        #""scope":"openid profile email User.Read","ext_expires_in":3599,"id_token":"eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e30.c2ln""#
                )
            },
            userAnswer:
                #"{"id":"87d349ed-44d7-43e1-9a83-5f2406dee5bd","displayName":"Megan Bowen","userPrincipalName":"MeganB@contoso.com"}"#,
            errorAnswer: {
                (
                    .badRequest,
                    "{\"error\":\"\($0)\",\"error_description\":\"AADSTS70000: The provided value for the grant is invalid.\",\"error_codes\":[70000]}"
                )
            }
        ), uid: "87d349ed-44d7-43e1-9a83-5f2406dee5bd", screenName: "Megan Bowen")
}
