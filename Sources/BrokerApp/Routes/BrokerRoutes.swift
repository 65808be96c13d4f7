import BrokerCore
import BrokerHTTP
import BrokerRedis

/// The broker's HTTP surface: which handler answers which method and path.
enum BrokerRoutes {
    /// The routes; `metrics` answers `/metrics`, nil when it is served on a listener of its own.
    static func make(readiness: Readiness, metrics: Router.Handler?, oauth: OAuthHandlers, webhooks: WebhookHandlers) -> Router {
        var router = Router()
        let healthy = Response.json(.ok, "{\"status\":\"ok\"}")
        router.get("/healthz") { _ in healthy }
        router.add(.GET, "/readyz", .async({ _ in
            let problem = await readiness.check()
            if let problem {
                return Response.json(.serviceUnavailable, "{\"status\":\"unavailable\",\"reason\":\(JSONString.quote(problem))}")
            }
            return Response.json(.ok, "{\"status\":\"ready\"}")
        }))
        if let metrics { router.add(.GET, "/metrics", metrics) }
        router.add(.GET, "/authorize", .async(oauth.authorizeBrowser))
        router.add(.POST, "/authorize", .async(oauth.authorizeAPI))
        router.add(.GET, "/callback", .async(oauth.callback))
        router.add(.GET, "/account", .fastPath(oauth.accountNow, otherwise: oauth.account))
        router.add(.DELETE, "/account", .async(oauth.delete))
        router.add(.GET, "/accounts", .async(oauth.list))
        router.get("/providers", oauth.providers)
        router.add(.GET, "/webhooks", .async(webhooks.list))
        router.add(.POST, "/webhooks/replay", .async(webhooks.replay))
        // The page for people; BROKER_PUBLIC_URL is the redirect URI without its fixed `/callback`.
        let publicURL = String(oauth.authorization.redirectURI.dropLast("/callback".count))
        let page = ConnectPageHandlers(accounts: oauth.accounts, registry: oauth.registry, access: oauth.access,
                                       cookies: oauth.cookies, publicURL: publicURL, appearance: oauth.appearance,
                                       logger: oauth.logger, now: oauth.now)
        router.add(.GET, "/", .async(page.page))
        router.add(.GET, "/disconnect", .async(page.confirmDisconnect))
        router.add(.POST, "/disconnect", .async(page.disconnect))
        return router
    }
}
