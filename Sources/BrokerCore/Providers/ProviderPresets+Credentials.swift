/// The catalogue's API-key and basic-auth presets: providers whose users copy a key (or a pair) from a dashboard
/// instead of signing in, each with its API base, the fields people enter, where calls carry them and the cheap request
/// that tells a good credential from a bad one.
///
/// docs/providers.md ("The API-key catalogue") cites the page behind each and marks with † what it could not confirm
/// there. Unlike the OAuth presets they need no broker-wide secret, so none is offered until the providers file names
/// it (`{"providers": {"openai": {}}}`); the file may change any value as for a custom provider (`verify`, `fields`…).
/// A provider whose API host depends on the customer (Algolia's `{application_id}-dsn.algolia.net`, a Freshdesk or
/// Zendesk subdomain) declares it as a per-account setting (``AccountSetting``), which each account gives.
extension ProviderPresets {
    /// Every API-key and basic-auth preset, in name order.
    static let credentialCatalogue: [ProviderConfiguration] = [
        airtable, algolia, anthropic, brevo, cloudflare, cohere, datadog, digitalocean, freshdesk, groq, linearKey, mailgun,
        mistral, notionInternal, openai, pinecone, posthog, postmark, resend, sendgrid, sentry, stripe, twilio, zendeskToken,
    ]

    /// An entered-credential preset: no sign-in, no environment variable; `fields` and `placement` as the provider
    /// documents, verified with `verify`.
    private static func entered(
        _ name: String, _ displayName: String, kind: ProviderKind = .apiKey, base: String, fields: [CredentialScheme.Field],
        placement: CredentialScheme.Placement, verify: CredentialScheme.Verification, headers: [(String, String)] = [],
        additionalHeaders: [CredentialScheme.HeaderField] = [], settings: [AccountSetting] = []
    ) -> ProviderConfiguration {
        var c = ProviderConfiguration(name: name, kind: kind)
        c.grants = []
        c.displayName = displayName
        c.apiBaseURL = base
        c.requestHeaders = headers
        var scheme = CredentialScheme(fields: fields, placement: placement, verification: verify)
        scheme.additionalHeaders = additionalHeaders
        c.credentials = scheme
        c.accountSettings = settings
        return c
    }

    private static func key(_ description: String, pattern: String? = nil, name: String = "api_key") -> CredentialScheme.Field {
        CredentialScheme.Field(name: name, description: description, pattern: pattern, maxLength: 512)
    }

    private static let bearerKey = CredentialScheme.Placement.header(name: "Authorization", format: "Bearer {api_key}")

    /// Airtable: a personal access token as Bearer; `meta/whoami` names the user.
    static let airtable = entered(
        "airtable", "Airtable", base: "https://api.airtable.com",
        fields: [key("Personal access token (starts with pat)")], placement: bearerKey,
        verify: .init(path: "/v0/meta/whoami", userIDField: ProviderJSONPath("id")))

    /// Algolia: the application's own host, `{application_id}-dsn.algolia.net`, with the key and the application id in
    /// two headers. Listing indices (ACL `listIndexes`) checks the pair; a search-only key is refused there, and the
    /// one read any key may do, `GET /1/keys/{key}`, carries the key in its path, where the broker puts no secret.
    static let algolia = entered(
        "algolia", "Algolia", base: "https://{application_id}-dsn.algolia.net",
        fields: [key("API key (with the listIndexes permission, such as the Write or Admin API key)")],
        placement: .header(name: "X-Algolia-API-Key", format: "{api_key}"), verify: .init(path: "/1/indexes"),
        additionalHeaders: [.init(name: "X-Algolia-Application-Id", format: "{application_id}")],
        settings: [
            AccountSetting(
                name: "application_id", description: "Application ID (Algolia dashboard, Settings → API Keys)", pattern: "[A-Za-z0-9]+")
        ])

    /// Anthropic: `x-api-key` with the `anthropic-version` every call needs.
    static let anthropic = entered(
        "anthropic", "Anthropic", base: "https://api.anthropic.com",
        fields: [key("API key (starts with sk-ant-)")], placement: .header(name: "x-api-key", format: "{api_key}"),
        verify: .init(path: "/v1/models"), headers: [("anthropic-version", "2023-06-01")])

    /// Brevo (Sendinblue): the `api-key` header; `GET /account` is its documented key check.
    static let brevo = entered(
        "brevo", "Brevo", base: "https://api.brevo.com/v3",
        fields: [key("API key (starts with xkeysib-)")], placement: .header(name: "api-key", format: "{api_key}"),
        verify: .init(path: "/account"))

    /// Cloudflare: an API token as Bearer, checked at `user/tokens/verify` (user tokens; an account token is checked
    /// under its account).
    static let cloudflare = entered(
        "cloudflare", "Cloudflare", kind: .bearer, base: "https://api.cloudflare.com/client/v4",
        fields: [key("API token", name: "token")], placement: .header(name: "Authorization", format: "Bearer {token}"),
        verify: .init(path: "/user/tokens/verify"))

    /// Cohere: Bearer; the model list needs a valid key.
    static let cohere = entered(
        "cohere", "Cohere", base: "https://api.cohere.com",
        fields: [key("API key")], placement: bearerKey, verify: .init(path: "/v1/models"))

    /// Datadog (US1 site): two keys in two headers; `validate_keys` checks both.
    static let datadog = entered(
        "datadog", "Datadog", base: "https://api.datadoghq.com",
        fields: [key("API key"), key("Application key", name: "application_key")],
        placement: .header(name: "DD-API-KEY", format: "{api_key}"), verify: .init(path: "/api/v2/validate_keys"),
        additionalHeaders: [.init(name: "DD-APPLICATION-KEY", format: "{application_key}")])

    /// DigitalOcean: a personal access token as Bearer; `GET /account` names the account by its uuid.
    static let digitalocean = entered(
        "digitalocean", "DigitalOcean", kind: .bearer, base: "https://api.digitalocean.com/v2",
        fields: [key("Personal access token (starts with dop_v1_)", name: "token")],
        placement: .header(name: "Authorization", format: "Bearer {token}"),
        verify: .init(path: "/account", userIDField: ProviderJSONPath("account.uuid")))

    /// Freshdesk: HTTP Basic with the API key as the user name and `X` as the password, at the account's own
    /// `{domain}.freshdesk.com`; `agents/me` names the agent. The user name here is the key: a secret, never a uid.
    static let freshdesk = entered(
        "freshdesk", "Freshdesk", kind: .basic, base: "https://{domain}.freshdesk.com/api/v2",
        fields: [
            CredentialScheme.Field(
                name: "username", description: "API key (Profile settings → View API key)", maxLength: 512, secret: true),
            CredentialScheme.Field(name: "password", description: "The letter X (Freshdesk ignores it)", pattern: "X", secret: false),
        ], placement: .basic, verify: .init(path: "/agents/me", userIDField: ProviderJSONPath("id")),
        settings: [subdomain("domain", "Your Freshdesk domain: the acme of acme.freshdesk.com")])

    /// A setting that is one DNS label of the provider's host.
    private static func subdomain(_ name: String, _ description: String) -> AccountSetting {
        AccountSetting(name: name, description: description, pattern: "[A-Za-z0-9][A-Za-z0-9-]*")
    }

    /// Groq: OpenAI-compatible, Bearer.
    static let groq = entered(
        "groq", "Groq", base: "https://api.groq.com/openai/v1",
        fields: [key("API key (starts with gsk_)")], placement: bearerKey, verify: .init(path: "/models"))

    /// Linear personal API keys: the key itself in `Authorization`, no scheme; GraphQL only, so the check is a POST
    /// without a query, which a valid key gets `400` for and a bad one `401`.
    static let linearKey = entered(
        "linear-key", "Linear (API key)", base: "https://api.linear.app",
        fields: [key("Personal API key (starts with lin_api_)")], placement: .header(name: "Authorization", format: "{api_key}"),
        verify: .init(method: "POST", path: "/graphql", validStatuses: [200, 400]))

    /// Mailgun (US region): HTTP Basic with the user `api` and the private key.
    static let mailgun = entered(
        "mailgun", "Mailgun", kind: .basic, base: "https://api.mailgun.net",
        fields: [
            CredentialScheme.Field(name: "username", description: "User name: the word api", pattern: "api"),
            CredentialScheme.Field(name: "password", description: "Private API key", maxLength: 512),
        ], placement: .basic, verify: .init(path: "/v3/domains"))

    /// Mistral: Bearer; the model list needs a valid key.
    static let mistral = entered(
        "mistral", "Mistral AI", base: "https://api.mistral.ai/v1",
        fields: [key("API key")], placement: bearerKey, verify: .init(path: "/models"))

    /// Notion internal integrations: the integration secret as Bearer with `Notion-Version`; `users/me` names the bot.
    static let notionInternal = entered(
        "notion-internal", "Notion (internal integration)", kind: .bearer, base: "https://api.notion.com/v1",
        fields: [key("Internal integration secret (starts with ntn_ or secret_)", name: "token")],
        placement: .header(name: "Authorization", format: "Bearer {token}"),
        verify: .init(path: "/users/me", userIDField: ProviderJSONPath("id")), headers: [("Notion-Version", "2022-06-28")])

    /// OpenAI: Bearer; the model list needs a valid key.
    static let openai = entered(
        "openai", "OpenAI", base: "https://api.openai.com/v1",
        fields: [key("API key (starts with sk-)")], placement: bearerKey, verify: .init(path: "/models"))

    /// Pinecone: the `Api-Key` header; the index list needs a valid key.
    static let pinecone = entered(
        "pinecone", "Pinecone", base: "https://api.pinecone.io",
        fields: [key("API key")], placement: .header(name: "Api-Key", format: "{api_key}"), verify: .init(path: "/indexes"))

    /// PostHog (US Cloud): a personal API key as Bearer on the private endpoints.
    static let posthog = entered(
        "posthog", "PostHog", base: "https://us.posthog.com",
        fields: [key("Personal API key (starts with phx_)")], placement: bearerKey, verify: .init(path: "/api/users/@me/"))

    /// Postmark: a server token in `X-Postmark-Server-Token`; `GET /server` reads that server.
    static let postmark = entered(
        "postmark", "Postmark", base: "https://api.postmarkapp.com",
        fields: [key("Server API token")], placement: .header(name: "X-Postmark-Server-Token", format: "{api_key}"),
        verify: .init(path: "/server"))

    /// Resend: Bearer; a full-access key lists domains (a sending-only key is refused there).
    static let resend = entered(
        "resend", "Resend", base: "https://api.resend.com",
        fields: [key("API key (starts with re_)")], placement: bearerKey, verify: .init(path: "/domains"))

    /// SendGrid: Bearer; `GET /v3/scopes` answers any valid key with its scopes.
    static let sendgrid = entered(
        "sendgrid", "SendGrid", base: "https://api.sendgrid.com",
        fields: [key("API key (starts with SG.)")], placement: bearerKey, verify: .init(path: "/v3/scopes"))

    /// Sentry (sentry.io): an auth token as Bearer; the organization list needs a valid one.
    static let sentry = entered(
        "sentry", "Sentry", kind: .bearer, base: "https://sentry.io/api/0",
        fields: [key("Auth token", name: "token")], placement: .header(name: "Authorization", format: "Bearer {token}"),
        verify: .init(path: "/organizations/"))

    /// Stripe: a secret or restricted key as Bearer; `GET /v1/balance` needs one.
    static let stripe = entered(
        "stripe", "Stripe", base: "https://api.stripe.com",
        fields: [key("Secret or restricted key (sk_… or rk_…)", pattern: "(sk|rk)_(live|test)_[A-Za-z0-9]+")],
        placement: bearerKey, verify: .init(path: "/v1/balance"))

    /// Twilio: HTTP Basic with the Account SID (or an API key SID) and its auth token (or secret).
    static let twilio = entered(
        "twilio", "Twilio", kind: .basic, base: "https://api.twilio.com",
        fields: [
            CredentialScheme.Field(
                name: "username", description: "Account SID (AC…) or API key SID (SK…)", pattern: "(AC|SK)[0-9a-fA-F]{32}"),
            CredentialScheme.Field(name: "password", description: "Auth token or API key secret", maxLength: 512),
        ], placement: .basic, verify: .init(path: "/2010-04-01/Accounts.json"))

    /// Zendesk with an API token: HTTP Basic with the user name `{email}/token` and the token as the password, at the
    /// account's own `{subdomain}.zendesk.com`; `users/me` names the user (an unauthenticated call gets the anonymous
    /// user, but a wrong pair gets `401`).
    static let zendeskToken = entered(
        "zendesk-token", "Zendesk (API token)", kind: .basic, base: "https://{subdomain}.zendesk.com/api/v2",
        fields: [
            CredentialScheme.Field(
                name: "username", description: "Your email address followed by /token (you@example.com/token)",
                pattern: "[^\\s:/]+@[^\\s:/]+/token", maxLength: 320),
            CredentialScheme.Field(
                name: "password", description: "API token (Admin Center → Apps and integrations → Zendesk API)", maxLength: 512),
        ], placement: .basic, verify: .init(path: "/users/me", userIDField: ProviderJSONPath("user.id")),
        settings: [subdomain("subdomain", "Your Zendesk subdomain: the acme of acme.zendesk.com")])
}
