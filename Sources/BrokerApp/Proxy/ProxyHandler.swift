import BrokerCore
import BrokerHTTP
import Foundation
import Synchronization

/// `/proxy/<path>`: calls the provider's API for the caller with an account's credential, which never leaves the broker.
///
/// The caller (API key only) names the account as ``AccountSelector`` reads it, from headers alone: the query goes on to
/// the provider. The request goes to the provider's `api_base_url` plus `<path>` and the query (``ProxyTarget``), with
/// the caller's fields filtered and the credential placed the provider's way (``ProxyOutbound``), under an
/// ``AddressPolicy`` that refuses private and special-purpose addresses before any socket unless the providers file
/// allows that host (`api_allow_private`). Bodies stream both ways; redirects come back as they are, never followed.
///
/// A `401` from the provider refreshes the account (the single flight of reads, across replicas) and replays the call
/// once when its body was kept (≤ 1 MiB); otherwise the `401` goes back with `Broker-Refreshed: true` so the caller may
/// retry. Any other status (a `429` or `503` with its `Retry-After` among them) goes back at once. An account that
/// needs re-authorization is `410` without a call.
struct ProxyHandler: Sendable {
    let accounts: AccountService
    let registry: ProviderRegistry
    let access: AccessControl
    let audit: AuditTrail
    let metrics: ProxyMetrics
    let client: HTTPClient
    /// Seconds a whole call may take, answer body included.
    let timeout: Double
    /// Providers' routes worked out once (those that need nothing of the account), by provider name.
    let routes = ProxyRoutes()

    /// The route prefix; what follows it (from its `/`) is the path under the API base.
    static let prefix = "/proxy/"
    /// The path under the API base of a request the router gave this handler (its path starts with ``prefix``),
    /// from the `/` that ends the prefix. Bytes, not characters, are dropped: a request's path is ASCII.
    static func path(of request: Request) -> String {
        String(Substring(request.path.utf8.dropFirst(prefix.utf8.count - 1)))
    }

    /// The largest body kept whole, so that a call refused with `401` can be sent again after a refresh.
    static let keptBodyLimit = 1 << 20

    /// Answers one proxied call.
    func proxy(_ request: Request) async -> Response {
        let started = ContinuousClock.now
        // The API key only: a browser's session cookie never reaches a provider's API through the broker.
        let who: AccessControl.Caller
        do { who = try access.authorize(request, .proxy) } catch { return error.response }
        var call = ProxyCall(request: request, caller: who.name, started: started)
        do throws(BrokerError) {
            let id = try await AccountSelector.from(request, readingQuery: false).resolve(in: accounts)
            if let provider = AccountID(id)?.provider { try who.grant.require(provider: provider) }
            try await who.requireStored(try AccountID.stored(id), in: accounts)
            call.accountID = id
            let account = try await accounts.account(id: try AccountID.stored(id))
            call.read = ProxyCall.ReadAccount(id: account.id, provider: account.provider, endUser: AuditEvent.endUser(of: account))
            let route = try route(for: account)
            call.host = route.base.host
            // A body already read whole (none, for most calls) is kept without an asynchronous call.
            let body =
                request.bodyStream == nil
                ? ProxyBody.kept(request.body) : try await ProxyBody.read(request, keepingUpTo: Self.keptBodyLimit)
            return try await forward(&call, account: account, route: route, body: body)
        } catch {
            var response = finish(call, failing: error)
            // A refresh the token was due for failed: say when the next try may succeed, as GET /account does.
            if error.isUpstreamFailure, call.read == nil, let named = call.accountID,
                let id = try? AccountID.stored(named), let seconds = await accounts.retryAfter(accountID: id)
            {
                response.headers.add(name: "Retry-After", value: String(seconds))
            }
            return response
        }
    }

    /// What the call needs of the account's provider: its configuration with the account's settings applied, its
    /// checked API base, how the credential is placed and the address rule. A provider whose calls need nothing of the
    /// account (no settings, a configured base) is worked out once and kept; any other is worked out per call, the
    /// same way.
    private func route(for account: Account) throws(BrokerError) -> ProxyRoute {
        if account.settings.isEmpty, let kept = routes.kept(account.provider) { return kept }
        guard let named = registry.provider(named: account.provider) else { throw .unknownProvider(account.provider) }
        // The account's own settings fill the API base (`https://{subdomain}.zendesk.com/api/v2`).
        var provider = try named.applyingSettings(account.settings).0
        // An API base the account's token answer named (Salesforce's `instance_url`), checked against the provider's domains.
        if provider.apiBaseURL == nil, let rule = provider.apiBaseFromTokenAnswer {
            provider.apiBaseURL = rule.base(in: account.extras)
        }
        let route = ProxyRoute(provider: provider, base: try Self.base(of: provider))
        if account.settings.isEmpty, named.accountSettings.isEmpty, named.apiBaseURL != nil {
            routes.keep(route, for: account.provider)
        }
        return route
    }

    /// The provider's checked API base; `503 provider_not_configured` without one.
    static func base(of provider: ProviderConfiguration) throws(BrokerError) -> ProxyTarget.Base {
        guard let text = provider.apiBaseURL else { throw .providerNotConfigured(provider.name, missing: ["api_base_url"]) }
        let key = BaseKey(url: text, allowingHTTP: provider.apiAllowPrivate)
        if let known = checkedBases.withLock({ $0[key] }) { return known }
        do throws(ProxyTarget.Failure) {
            let base = try ProxyTarget.Base(text, allowingHTTP: provider.apiAllowPrivate)
            checkedBases.withLock { table in
                if table.count >= 1024 { table.removeAll() }
                table[key] = base
            }
            return base
        } catch {
            throw .providerUnavailable(provider.name, reason: "its api_base_url cannot be proxied to")
        }
    }

    /// A configured base as checked: the same text under the same rule checks the same way every time.
    private struct BaseKey: Hashable {
        let url: String
        let allowingHTTP: Bool
    }

    /// Bases already checked, so a call does not parse its provider's again (a handful: one per configured base).
    private static let checkedBases = Mutex<[BaseKey: ProxyTarget.Base]>([:])

    /// Sends the call, and once more after a refresh when the provider refused the token and the body was kept.
    private func forward(
        _ call: inout ProxyCall, account: Account, route: ProxyRoute, body: ProxyBody
    ) async throws(BrokerError) -> Response {
        // The route's configuration is read in place, never copied out (it is large), and the account is not copied
        // either: after a refresh only the credential changes (the refresh runs once, for the account as read).
        var credential = ProxyCredential(account: account, provider: route.provider)
        var refreshed = false
        while true {
            let outbound = try Self.outbound(call.request, path: call.path, route: route, credential: credential, body: body)
            let sent = ContinuousClock.now
            let answer = try await send(outbound, provider: route.provider.name, body: body)
            call.upstreamSeconds = Self.seconds(since: sent)
            call.sent = body.sent
            // An entered credential has nothing to refresh: the provider's refusal goes back as it is.
            guard answer.status == 401, !refreshed, !route.provider.kind.holdsEnteredCredentials else {
                return relay(answer, call: call, credential: credential, refreshed: refreshed)
            }
            // RFC 6750 §3.1: the token was refused. Refresh it (once across replicas), then replay a kept body.
            guard let fresh = await refreshAfterRejection(of: account) else {
                return relay(answer, call: call, credential: credential, refreshed: false)
            }
            metrics.tokenRenewed(provider: route.provider.name)
            refreshed = true
            guard body.isReplayable else {
                var response = relay(answer, call: call, credential: credential, refreshed: true)
                response.headers.add(name: "Broker-Refreshed", value: "true")
                return response
            }
            answer.body.cancel()
            credential = ProxyCredential(account: fresh, provider: route.provider)
        }
    }

    /// The account with a token other than the refused one: refreshed now, or already by another call or replica
    /// (the refresh's single flight and its reuse window make twenty refused calls one refresh). Nil when it cannot be
    /// refreshed (no refresh token, a dead grant, the provider failing): the provider's `401` then goes back as it is.
    private func refreshAfterRejection(of account: Account) async -> Account? {
        guard let id = try? AccountID.stored(account.id) else { return nil }
        if let current = try? await accounts.account(id: id), current.accessToken.value != account.accessToken.value {
            return current
        }
        return try? await accounts.refreshNow(id: id)
    }

    /// The outbound request: URL, filtered fields with the credential placed, and the body.
    private static func outbound(
        _ request: Request, path: String, route: ProxyRoute, credential: ProxyCredential, body: ProxyBody
    ) throws(BrokerError) -> HTTPClientRequest {
        let base = route.base
        let made: ProxyOutbound.Request
        do throws(ProxyOutbound.Failure) {
            made = try ProxyOutbound.make(
                method: request.method.rawValue, base: base, path: path,
                query: request.head.query, callerHeaders: request.headers.fields, credential: credential,
                placement: route.placement, body: body.kept)
        } catch {
            switch error {
            case .refused(let reason): throw .badRequest("The call cannot be proxied: \(reason).")
            case .unusable(let reason): throw .providerUnavailable(route.provider.name, reason: reason)
            }
        }
        var url = made.url
        if route.provider.kind == .mcp, path == "/", let server = route.provider.mcpServer {
            // A remote MCP server is one endpoint (MCP streamable HTTP): `/proxy/` calls the server URL itself, which
            // has no trailing `/`; deeper paths join it as for any API base.
            let query = request.head.query.flatMap { $0.isEmpty ? nil : $0 }
            url = server + (query.map { "?" + $0 } ?? "")
        }
        // RFC 9110 §15.4: a redirect is the provider's answer to the caller, so the client follows none.
        return HTTPClientRequest(
            method: request.method.rawValue, url: url, headers: made.headers, body: body.outbound,
            addressPolicy: route.addressPolicy)
    }

    /// Sends `request`; an idempotent call with a kept body is tried once more when the connection could not be made.
    private func send(
        _ request: HTTPClientRequest, provider: String, body: ProxyBody
    ) async throws(BrokerError) -> HTTPClientResponse {
        var retried = false
        while true {
            do {
                return try await client.stream(request, timeout: timeout)
            } catch {
                // RFC 9110 §9.2.2: only a request that never reached the provider, and may be sent twice, goes again.
                if !retried, body.isReplayable, request.isIdempotentMethod, error == .connectRefused || error == .connectTimeout {
                    retried = true
                    continue
                }
                throw Self.failure(error, provider: provider)
            }
        }
    }

    /// The broker error for a call that got no answer; its message names the cause, never the URL.
    static func failure(_ error: HTTPClientError, provider: String) -> BrokerError {
        switch error {
        case .deadline, .connectTimeout:
            return .upstreamTimeout(step: "proxy")
        case .addressRefused:
            return .upstreamError(
                step: "proxy", reason: "the API host resolves to a private or special-purpose address the providers file does not allow")
        default:
            return .upstreamError(step: "proxy", reason: error.description)
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

extension HTTPClientRequest {
    /// RFC 9110 §9.2.2: whether the method may be sent twice.
    var isIdempotentMethod: Bool { ["GET", "HEAD", "OPTIONS", "PUT", "DELETE"].contains(method) }
}

/// What a proxied call needs of its provider, worked out once for it: the configuration (with the account's settings
/// applied), the checked API base, the credential's placement and the address rule. A class, so a call holds it by
/// reference: the configuration is a large value, and copying it on every call was about 1 % of a call's instructions.
final class ProxyRoute: Sendable {
    let provider: ProviderConfiguration
    let base: ProxyTarget.Base
    let placement: ProxyCredentialPlacement
    /// Private and special-purpose addresses refused but for the API host when the providers file allows it.
    let addressPolicy: AddressPolicy

    init(provider: ProviderConfiguration, base: ProxyTarget.Base) {
        self.provider = provider
        self.base = base
        placement = ProxyCredentialPlacement(provider: provider)
        addressPolicy = AddressPolicy(allowedHosts: provider.apiAllowPrivate ? [base.host] : [])
    }
}

/// The routes of providers whose calls need nothing of the account, by provider name: one per configured provider at
/// most, made from the handler's registry, which does not change under it.
final class ProxyRoutes: Sendable {
    private let table = Mutex<[String: ProxyRoute]>([:])

    init() {}

    func kept(_ provider: String) -> ProxyRoute? { table.withLock { $0[provider] } }

    func keep(_ route: ProxyRoute, for provider: String) {
        table.withLock { table in
            // The registry's providers bound it; a bound all the same, should that change.
            if table.count >= 1024 { table.removeAll() }
            table[provider] = route
        }
    }
}
