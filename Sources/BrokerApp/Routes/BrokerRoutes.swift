import BrokerCore
import BrokerHTTP
import BrokerRedis

/// The broker's HTTP surface: which handler answers which method and path.
///
/// docs/openapi.yaml describes every route registered here; `OpenAPIDocumentTests` fails when one is missing there.
enum BrokerRoutes {
    /// The routes; `metrics` answers `/metrics`, nil when it is served on a listener of its own.
    static func make(
        readiness: Readiness, metrics: Router.Handler?, oauth: OAuthHandlers, webhooks: WebhookHandlers,
        appTokens: AppTokenHandlers, backup: BackupHandlers, forwardAuth: ForwardAuthHandler, proxy: ProxyHandler,
        credentials: CredentialHandlers, proxyMaxBodyBytes: Int, cors: CORSPolicy, connectPage: Bool = true
    ) -> Router {
        var router = Router(refusals: .errorBody)
        let healthy = Response.json(.ok, "{\"status\":\"ok\"}")
        router.get("/healthz") { _ in healthy }
        router.add(
            .GET, "/readyz",
            .async({ _ in
                let problem = await readiness.check()
                if let problem {
                    return Response.json(.serviceUnavailable, "{\"status\":\"unavailable\",\"reason\":\(JSONString.quote(problem))}")
                }
                if let degraded = readiness.degraded() {
                    return Response.json(.ok, "{\"status\":\"degraded\",\"reason\":\(JSONString.quote(degraded))}")
                }
                return Response.json(.ok, "{\"status\":\"ready\"}")
            }))
        if let metrics { router.add(.GET, "/metrics", metrics) }
        // A sign-in's handlers run on the worker that reads the browser's connection, as /proxy's do: the provider's
        // answer and the store's (PostgreSQL's round trips run on the same workers) resume them on that thread
        // (docs/performance.md, "PostgreSQL round trips on the epoll workers").
        if connectPage { router.add(.GET, "/authorize", .async(oauth.authorizeBrowser), onWorker: true) }
        router.add(.POST, "/authorize", .async(oauth.authorizeAPI), onWorker: true)
        router.add(.POST, "/device/authorize", .async(oauth.authorizeDevice))
        router.add(.GET, "/callback", .async(oauth.callback), onWorker: true)
        router.add(.GET, prefix: OAuthHandlers.flowsPrefix, .async(oauth.flow))
        // The browser-session routes: listed front-end origins may call them from their pages (CORS).
        router.add(.GET, "/account", cors.wrap(.fastPath(oauth.accountNow, otherwise: oauth.account)))
        router.add(.DELETE, "/account", cors.wrap(.async(oauth.delete)))
        router.add(.OPTIONS, "/account", cors.preflight(methods: [.GET, .HEAD, .DELETE]))
        router.add(.GET, "/accounts", cors.wrap(.async(oauth.list)))
        router.add(.OPTIONS, "/accounts", cors.preflight(methods: [.GET, .HEAD]))
        // Entered credentials (API key, basic, bearer): the API key only, never a browser's page.
        router.add(.POST, "/accounts", .async(credentials.create))
        router.add(.POST, "/account/verify", .async(credentials.verify))
        router.add(.PATCH, "/account", .async(credentials.edit))
        router.add(.POST, "/account/refresh", cors.wrap(.async({ await oauth.refresh($0, cors: cors) })))
        router.add(.OPTIONS, "/account/refresh", cors.preflight(methods: [.POST]))
        router.add(.GET, "/app-token", .async(appTokens.appToken))
        // Every method: a gateway's check keeps the method of the request it guards (nginx auth_request, Envoy).
        // Under /auth/ too: Envoy's ext_authz appends the guarded request's path to its path_prefix.
        for method in [HTTPMethod.GET, .POST, .PUT, .PATCH, .DELETE, .OPTIONS] {
            router.add(method, "/auth", .async(forwardAuth.authenticate))
            router.add(method, prefix: "/auth/", .async(forwardAuth.authenticate))
        }
        // The API proxy: any method but CONNECT and TRACE, bodies streamed both ways. Its calls run on the worker that
        // reads the caller's connection, and the provider's answer is read there too: no thread hop per call.
        for method in [HTTPMethod.GET, .HEAD, .POST, .PUT, .PATCH, .DELETE, .OPTIONS] {
            router.add(
                method, prefix: ProxyHandler.prefix, .streaming(proxy.proxy, maxBodyBytes: proxyMaxBodyBytes), onWorker: true)
        }
        // A remote MCP server is one endpoint taking POSTs (MCP streamable HTTP): `POST /proxy/` calls the server URL.
        router.add(.POST, ProxyHandler.prefix, .streaming(proxy.proxy, maxBodyBytes: proxyMaxBodyBytes), onWorker: true)
        // Front ends on the listed origins build their own provider lists from it.
        router.add(.GET, "/providers", cors.wrap(.sync(oauth.providers)))
        router.add(.OPTIONS, "/providers", cors.preflight(methods: [.GET, .HEAD]))
        // Remote MCP servers' authorization servers read the broker's client ID metadata documents here.
        let clientDocuments = ClientMetadataDocument.Handler(registry: oauth.registry, redirectURI: oauth.authorization.redirectURI)
        router.add(.GET, prefix: ClientMetadataDocument.routePrefix, .sync(clientDocuments.document))
        router.add(.GET, "/webhooks", .async(webhooks.list))
        router.add(.POST, "/webhooks/replay", .async(webhooks.replay))
        router.add(.POST, "/backup", .async(backup.backup))
        let openAPI = OpenAPIDocument.response
        router.get("/openapi.json") { _ in openAPI }
        // The page for people; BROKER_PUBLIC_URL is the redirect URI without its fixed `/callback`.
        let publicURL = String(oauth.authorization.redirectURI.dropLast("/callback".count))
        let page = ConnectPageHandlers(
            accounts: oauth.accounts, registry: oauth.registry, access: oauth.access,
            cookies: oauth.cookies, publicURL: publicURL, appearance: oauth.appearance,
            logger: oauth.logger, audit: oauth.audit, now: oauth.now)
        if connectPage {
            router.add(.GET, "/", .async(page.page))
            router.add(.GET, "/disconnect", .async(page.confirmDisconnect))
            router.add(.POST, "/disconnect", .async(page.disconnect))
        }
        // Connect sessions: made by back ends, run by front ends in a popup, on whatever BROKER_CONNECT_PAGE says.
        let sessions = ConnectSessionHandlers(
            authorization: oauth.authorization, registry: oauth.registry, accounts: oauth.accounts, access: oauth.access,
            cookies: oauth.cookies,
            appearance: oauth.appearance, origins: cors.origins, publicURL: publicURL, flowTTL: oauth.flowTTL, logger: oauth.logger,
            verifier: credentials.verifier, audit: oauth.audit)
        router.add(.POST, "/connect/sessions", .async(sessions.create))
        router.add(.GET, "/connect", .async(sessions.open))
        router.add(.GET, "/connect/start", .async(sessions.choose))
        router.add(.POST, "/connect/credentials", .async(sessions.submit))
        router.add(.POST, "/connect/settings", .async(sessions.submitSettings))
        router.get("/connect.js", sessions.script)
        return router
    }
}
