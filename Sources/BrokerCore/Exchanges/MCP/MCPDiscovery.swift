import Foundation

/// Discovers each remote MCP server's authorization server and registers the broker there, retrying until it works.
///
/// For a provider of kind `mcp` with `server`: the server is called without a token and its `401`'s
/// `WWW-Authenticate: Bearer resource_metadata="…"` names the protected resource metadata (RFC 9728 §5.1), else the
/// metadata is looked up at its well-known URLs (§3.1); its `resource` must be the server (§3.3). The first of its
/// `authorization_servers` is the issuer, whose metadata is read from RFC 8414's well-known URL, else OpenID
/// Connect's, its `issuer` equal to the one looked up (RFC 8414 §3.3), and it must offer PKCE S256. The client is
/// the providers file's `client_id`, else the broker's client ID metadata document when the server supports one and
/// the broker can serve it, else one registered by RFC 7591 and kept in the ``ClientRegistrationStore``: at most one
/// replica registers (a ``RefreshLock`` held while it does), the others wait and read what it stored.
///
/// Every fetch goes through the same ``UpstreamClient`` as every provider call (no redirects, the outbound deadline and
/// size cap) and is reported under the steps `discovery` and `client_registration`. The server chose these URLs, so
/// they must resolve to public addresses (``UpstreamRequest/publicAddressesOnly``; SSRF) and be `https`, unless the
/// entry says `api_allow_private`, as for a server on the operator's own network. A provider whose discovery fails
/// stays unavailable, with the reason, and is tried again with backoff; the rest of the broker works on.
public struct MCPDiscovery: Sendable {
    /// The providers, whose ``ProviderRegistry/mcp`` cache is filled.
    public let registry: ProviderRegistry
    /// The outbound client.
    let upstream: any UpstreamClient
    /// Hears of every call, for metrics; nil reports nothing.
    let observer: (any ProviderCallObserver)?
    /// Where registrations are kept.
    let registrations: any ClientRegistrationStore
    /// Lets one replica at a time register at a server.
    let lock: any RefreshLock
    /// The broker's redirect URI, registered as the client's only one.
    let redirectURI: String
    /// The URL of the broker's client ID metadata document for a provider, or nil when the broker cannot offer one
    /// (its public URL is not `https`, as the document's URL must be).
    let clientMetadataURL: @Sendable (String) -> String?
    /// The clock registrations are dated by.
    let now: @Sendable () -> Date
    /// How many times a replica that did not get the registration lock looks for the registration, a quarter second apart.
    let waitTries: Int

    /// Creates a loader for `registry`'s MCP providers.
    public init(
        registry: ProviderRegistry, upstream: any UpstreamClient, registrations: any ClientRegistrationStore, lock: any RefreshLock,
        redirectURI: String, clientMetadataURL: @escaping @Sendable (String) -> String?, providerCalls: (any ProviderCallObserver)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }, waitTries: Int = 120
    ) {
        self.registry = registry
        self.upstream = upstream
        self.registrations = registrations
        self.lock = lock
        self.redirectURI = redirectURI
        self.clientMetadataURL = clientMetadataURL
        self.observer = providerCalls
        self.now = now
        self.waitTries = waitTries
    }

    /// One try for `provider`: discovers, registers, and records the outcome, which it returns.
    @discardableResult
    public func load(_ provider: String) async -> DiscoveryCache<MCPAuthorization>.State {
        let state: DiscoveryCache<MCPAuthorization>.State
        do throws(BrokerError) {
            state = .loaded(try await discover(provider))
        } catch {
            state = .failed(OIDCDiscovery.reason(error))
        }
        registry.mcp.record(state, for: provider)
        return state
    }

    /// Tries every tracked provider until it loads or the task is cancelled, each on its own backoff
    /// (as ``OIDCDiscovery/keepLoading(initialDelay:maximumDelay:report:)``); `report` hears every outcome.
    public func keepLoading(
        initialDelay: Double = 1, maximumDelay: Double = 300,
        report: @escaping @Sendable (String, DiscoveryCache<MCPAuthorization>.State) -> Void = { _, _ in }
    ) async {
        await DiscoveryCache<MCPAuthorization>.keepTrying(registry.mcp.providers, initialDelay: initialDelay, maximumDelay: maximumDelay) {
            provider in
            let state = await load(provider)
            report(provider, state)
            if case .loaded = state { return true }
            return false
        }
    }

    /// The server's authorization and the client, or the failure.
    func discover(_ name: String) async throws(BrokerError) -> MCPAuthorization {
        guard let provider = registry.provider(named: name), let server = provider.mcpServer else { throw .unknownProvider(name) }
        let allowHTTP = provider.apiAllowPrivate
        let call = ProviderCall(upstream: upstream, provider: name, observer: observer)
        let step = ProviderStep.discovery
        let publicOnly = !allowHTTP
        let challenge = await self.challenge(server, call: call, publicOnly: publicOnly)
        let resource = try await protectedResource(server, challenge: challenge.resourceMetadata, allowHTTP: allowHTTP, call: call)
        let (metadata, fields) = try await authorizationServer(resource.authorizationServer, publicOnly: publicOnly, call: call)
        // MCP authorization, security considerations: without S256 in the metadata the client must not proceed.
        guard metadata.codeChallengeMethods?.contains(PKCE.method) == true else {
            throw .upstreamError(
                step: step.rawValue, reason: "the authorization server does not list PKCE S256 in code_challenge_methods_supported")
        }
        let scheme = URLComponents(string: metadata.issuer)?.scheme?.lowercased() ?? "https"
        let registrationEndpoint: String?
        do throws(OIDCDocumentProblem) {
            registrationEndpoint = try OIDCProviderMetadata.endpoint(fields, "registration_endpoint", scheme: scheme)
        } catch {
            throw .upstreamError(step: step.rawValue, reason: error.description)
        }
        var authorization = MCPAuthorization(
            server: server, metadata: metadata, registrationEndpoint: registrationEndpoint,
            supportsClientMetadataDocument: JSONBoolean.value(fields["client_id_metadata_document_supported"]) == true,
            scopes: MCPServerMetadata.scopes(challenge.scope) ?? resource.scopesSupported ?? [], clientID: "",
            clientSecret: nil, authentication: .publicClient, clientSource: .preRegistered)
        if let id = provider.clientID {
            authorization.clientID = id
            authorization.clientSecret = provider.clientSecret
            authorization.authentication = provider.clientSecret == nil ? .publicClient : .clientSecretBasic
        } else if authorization.supportsClientMetadataDocument, let url = clientMetadataURL(name) {
            authorization.clientID = url
            authorization.clientSource = .metadataDocument
        } else if let endpoint = registrationEndpoint {
            let registration = try await registered(provider, server: server, issuer: metadata.issuer, endpoint: endpoint, call: call)
            authorization.clientID = registration.clientID
            authorization.clientSecret = registration.clientSecret
            authorization.authentication = registration.authentication
            authorization.clientSource = .dynamic
        } else {
            throw .upstreamError(
                step: ProviderStep.registration.rawValue,
                reason:
                    "the authorization server offers neither client ID metadata documents the broker can serve (an https BROKER_PUBLIC_URL) nor a registration_endpoint; give client_id"
            )
        }
        return authorization
    }

    /// The `resource_metadata` and `scope` of the server's `401` to a call without a token, nil each when it
    /// answered otherwise or could not be reached (the well-known URLs are tried then).
    func challenge(_ server: String, call: ProviderCall, publicOnly: Bool) async -> (resourceMetadata: String?, scope: String?) {
        let ping = #"{"jsonrpc":"2.0","id":0,"method":"ping"}"#
        var request = UpstreamRequest(
            method: "POST", url: server,
            headers: [
                ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                ("User-Agent", ProviderCall.userAgent),
            ], body: Array(ping.utf8))
        request.publicAddressesOnly = publicOnly
        let answer = try? await call.perform(request, step: .discovery, secrets: []) { response throws(BrokerError) in
            response.status == 401 ? MCPServerMetadata.challenge(response.header("WWW-Authenticate")) : (nil, nil)
        }
        return answer ?? (nil, nil)
    }

    /// The server's checked protected resource metadata: from `challenge`'s URL when the `401` named one, else from the
    /// first well-known URL that answers `200`.
    func protectedResource(_ server: String, challenge: String?, allowHTTP: Bool, call: ProviderCall) async throws(BrokerError)
        -> MCPServerMetadata.ProtectedResource
    {
        let step = ProviderStep.discovery
        var urls = MCPServerMetadata.protectedResourceURLs(server: server)
        if let challenge {
            if let problem = MCPServerMetadata.urlProblem(challenge, allowingHTTP: allowHTTP) {
                throw .upstreamError(step: step.rawValue, reason: "the server's resource_metadata \(problem)")
            }
            urls = [challenge]
        }
        var lastReason = "no protected resource metadata at \(urls.joined(separator: " or "))"
        for url in urls {
            let found = try await call.perform(Self.get(url, publicOnly: !allowHTTP), step: step, secrets: []) {
                response throws(BrokerError) -> MCPServerMetadata.ProtectedResource? in
                guard response.status == 200 else {
                    lastReason = "the protected resource metadata answered HTTP \(response.status)"
                    return nil
                }
                switch MCPServerMetadata.protectedResource(response.body, server: server, allowingHTTP: allowHTTP) {
                case .success(let resource): return resource
                case .failure(let problem): throw .upstreamError(step: step.rawValue, reason: problem.description)
                }
            }
            if let found { return found }
        }
        throw .upstreamError(step: step.rawValue, reason: lastReason)
    }

    /// The authorization server's checked metadata and the document's fields, from the first well-known URL whose
    /// document passes (RFC 8414 §3.1, §3.3; OpenID Connect Discovery §4).
    func authorizationServer(_ issuer: String, publicOnly: Bool, call: ProviderCall) async throws(BrokerError) -> (
        OIDCProviderMetadata, [String: Any]
    ) {
        let step = ProviderStep.discovery
        var lastReason = "no authorization server metadata for \(issuer)"
        // A document refused for what it says explains more than a later URL's 404: that reason is kept.
        var refused = false
        for url in MCPServerMetadata.authorizationServerURLs(issuer: issuer) {
            let found = try await call.perform(Self.get(url, publicOnly: publicOnly), step: step, secrets: []) {
                response throws(BrokerError) -> (OIDCProviderMetadata, [String: Any])? in
                guard response.status == 200 else {
                    if !refused { lastReason = "the authorization server metadata answered HTTP \(response.status)" }
                    return nil
                }
                switch OIDCProviderMetadata.parse(response.body, issuer: issuer) {
                case .success(let metadata):
                    guard case .object(let fields) = ResponseBody(response.body).parse(acceptForm: false) else { return nil }
                    return (metadata, fields)
                case .failure(let problem):
                    lastReason = "the authorization server metadata: " + problem.description
                    refused = true
                    return nil
                }
            }
            if let found { return found }
        }
        throw .upstreamError(step: step.rawValue, reason: lastReason)
    }

    /// The registration kept for this server, issuer and redirect URI, registering one when there is none: under the
    /// store's lock so that replicas starting together register once; a replica that does not get the lock waits for
    /// the registration the holder stores.
    func registered(_ provider: ProviderConfiguration, server: String, issuer: String, endpoint: String, call: ProviderCall)
        async throws(BrokerError) -> ClientRegistration
    {
        let key = ClientRegistration.key(server: server, issuer: issuer, redirectURI: redirectURI)
        if let kept = try await stored(key) { return kept }
        for _ in 0..<max(waitTries, 1) {
            if let token = try await acquire("register:" + key) {
                let outcome: Result<ClientRegistration, BrokerError>
                do throws(BrokerError) {
                    if let kept = try await stored(key) {
                        outcome = .success(kept)
                    } else {
                        let fresh = try await register(provider, server: server, issuer: issuer, endpoint: endpoint, call: call)
                        outcome = .success(try await keep(fresh))
                    }
                } catch {
                    outcome = .failure(error)
                }
                _ = try? await lock.release(key: "register:" + key, token: token)
                return try outcome.get()
            }
            try? await Task.sleep(nanoseconds: 250_000_000)
            if let kept = try await stored(key) { return kept }
        }
        throw .providerUnavailable(provider.name, reason: "another replica is registering the broker at the authorization server")
    }

    /// The registration lock `key` for two minutes, nil while another holds it.
    private func acquire(_ key: String) async throws(BrokerError) -> String? {
        do { return try await lock.acquire(key: key, ttl: 120) } catch { throw BrokerError(error) }
    }

    /// The registration under `key`, a store failure as a broker error.
    private func stored(_ key: String) async throws(BrokerError) -> ClientRegistration? {
        do { return try await registrations.registration(for: key) } catch { throw BrokerError(error) }
    }

    /// Stores `registration` unless one is kept already; returns the kept one.
    private func keep(_ registration: ClientRegistration) async throws(BrokerError) -> ClientRegistration {
        do { return try await registrations.add(registration) } catch { throw BrokerError(error) }
    }

    /// Registers the broker at `endpoint` (RFC 7591 §3.1): a public client (`none`) for the code and refresh grants,
    /// redirecting to the broker's callback; the answer's `client_id`, and its secret and method when it issued one.
    func register(_ provider: ProviderConfiguration, server: String, issuer: String, endpoint: String, call: ProviderCall)
        async throws(BrokerError) -> ClientRegistration
    {
        let step = ProviderStep.registration
        let loopback = URLComponents(string: redirectURI)?.host.map { ["127.0.0.1", "localhost", "::1", "[::1]"].contains($0) } ?? false
        let body: [String: Any] = [
            "redirect_uris": [redirectURI], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "client_name": provider.mcpClientName ?? "token-broker",
            // MCP authorization: `native` for a loopback redirect, which OpenID's default `web` refuses.
            "application_type": loopback ? "native" : "web",
        ]
        let bytes = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])).map { [UInt8]($0) } ?? []
        var request = UpstreamRequest(
            method: "POST", url: endpoint,
            headers: [("Content-Type", "application/json"), ("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)],
            body: bytes)
        request.publicAddressesOnly = !provider.apiAllowPrivate
        let now = self.now()
        let redirect = redirectURI
        return try await call.perform(request, step: step, secrets: []) { response throws(BrokerError) in
            guard (200..<300).contains(response.status) else {
                // RFC 7591 §3.2.2: the error code is a short ASCII name; quote it only when it is one.
                let code = (ResponseBody(response.body).fields(acceptForm: false)?["error"] as? String).flatMap {
                    $0.utf8.count <= 64 && $0.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F } ? $0 : nil
                }
                throw .upstreamError(step: step.rawValue, reason: "HTTP \(response.status)" + (code.map { " (\($0))" } ?? ""))
            }
            return try Self.registration(
                response.body, server: server, issuer: issuer, redirectURI: redirect, at: now, step: step.rawValue)
        }
    }

    /// The client in a registration answer (RFC 7591 §3.2.1), checked: a `client_id` of 1 to 256 visible ASCII bytes, a
    /// `client_secret` of at most 512, and a `token_endpoint_auth_method` the broker speaks (absent: Basic with a
    /// secret, else `none`, RFC 7591 §2).
    static func registration(_ body: [UInt8], server: String, issuer: String, redirectURI: String, at now: Date, step: String)
        throws(BrokerError) -> ClientRegistration
    {
        func refuse(_ reason: String) -> BrokerError { .upstreamError(step: step, reason: reason) }
        guard body.count <= OIDCProviderMetadata.maximumDocumentBytes,
            case .object(let fields) = ResponseBody(body).parse(acceptForm: false)
        else { throw refuse("the registration answer is not a JSON object") }
        func visible(_ text: String, _ limit: Int) -> Bool {
            !text.isEmpty && text.utf8.count <= limit && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
        }
        guard let id = fields["client_id"] as? String, visible(id, 256) else {
            throw refuse("the registration answer has no client_id of 1 to 256 visible characters")
        }
        var secret: Secret?
        if let raw = fields["client_secret"], !(raw is NSNull) {
            guard let text = raw as? String, visible(text, 512) else {
                throw refuse("the registration answer's client_secret is malformed")
            }
            secret = Secret(text)
        }
        var method: ClientAuthentication = secret == nil ? .publicClient : .clientSecretBasic
        if let raw = fields["token_endpoint_auth_method"] as? String {
            guard let parsed = ClientAuthentication(rawValue: raw) else {
                throw refuse("the server registered a token_endpoint_auth_method the broker does not speak")
            }
            method = parsed
        }
        if method != .publicClient, secret == nil {
            throw refuse("the server registered a client that authenticates with a secret but issued none")
        }
        if method == .publicClient { secret = nil }
        return ClientRegistration(
            server: server, issuer: issuer, redirectURI: redirectURI, clientID: id, clientSecret: secret, authentication: method,
            registeredAt: now)
    }

    /// A `GET` asking for JSON, to public addresses only when `publicOnly`.
    static func get(_ url: String, publicOnly: Bool) -> UpstreamRequest {
        var request = UpstreamRequest(
            method: "GET", url: url, headers: [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)])
        request.publicAddressesOnly = publicOnly
        return request
    }
}
