import BrokerCore
import BrokerHTTP

/// The broker's client ID metadata documents: `GET /.well-known/oauth-client/<provider>`, one per remote MCP server
/// provider, whose URL is the `client_id` the broker signs in with where the authorization server supports such
/// documents (`client_id_metadata_document_supported`; draft-ietf-oauth-client-id-metadata-document).
///
/// The document uses RFC 7591's field names: `client_id` (its own URL, compared as an exact string), `client_name`,
/// `redirect_uris` (the broker's callback), the code and refresh grants, and `token_endpoint_auth_method: none`
/// (such a client holds no secret). The URL must be `https`, so a broker whose public URL is `http` offers none and
/// registers dynamically instead. Public: an authorization server fetches it without credentials.
enum ClientMetadataDocument {
    /// The route prefix; the provider's name follows it.
    static let routePrefix = "/.well-known/oauth-client/"

    /// The document's URL for `provider` under `publicURL` (the broker's, without a trailing `/`), nil when that is not `https`.
    static func url(publicURL: String, provider: String) -> String? {
        guard publicURL.lowercased().hasPrefix("https://") else { return nil }
        return publicURL + routePrefix + provider
    }

    /// Answers the route.
    struct Handler: Sendable {
        /// The providers.
        let registry: ProviderRegistry
        /// The broker's redirect URI.
        let redirectURI: String

        /// `200` with the document of a configured `mcp` provider; `404` for any other name or when the broker's
        /// public URL is not `https`.
        func document(_ request: Request) -> Response {
            let name = String(request.path.dropFirst(routePrefix.count))
            let publicURL = String(redirectURI.dropLast("/callback".count))
            guard let provider = registry.provider(named: name), provider.kind == .mcp, provider.isConfigured,
                let url = ClientMetadataDocument.url(publicURL: publicURL, provider: name)
            else {
                return Response.error(
                    .notFound, code: "not_found",
                    message:
                        "No client metadata document here: no configured mcp provider of that name, or the broker's public URL is not https."
                )
            }
            let body = AccountJSON.object([
                ("client_id", JSONString.quote(url)),
                ("client_name", JSONString.quote(provider.mcpClientName ?? "token-broker")),
                ("redirect_uris", "[" + JSONString.quote(redirectURI) + "]"),
                ("grant_types", "[\"authorization_code\",\"refresh_token\"]"),
                ("response_types", "[\"code\"]"),
                ("token_endpoint_auth_method", "\"none\""),
            ])
            var headers = HTTPHeaders()
            // Authorization servers cache it per HTTP rules; an hour lets a changed name or URL reach them the same day.
            headers.add(name: "Cache-Control", value: "public, max-age=3600")
            return Response.json(.ok, body, headers: headers)
        }
    }
}
