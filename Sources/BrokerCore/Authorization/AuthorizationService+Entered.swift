import BrokerCrypto
import Foundation

/// Connect sessions for `api_key`, `basic` and `bearer` providers: the person fills in a form on the hosted page
/// instead of signing in at the provider.
///
/// The form is a flow like a sign-in's (``ConnectContext/Stage/flow``, bound to the browser's cookie nonce, single
/// use, with a pending outcome at `/flows/{state}`), and it ends through the same ``finish(_:takenAt:bindingProof:obtain:)``
/// as a callback: the same outcome, `flow.completed` or `flow.failed`, `account.connected` and flow events. A value
/// that is wrong or a credential the provider refuses does not end it: the page puts the flow back and asks again.
extension AuthorizationService {
    /// Starts the form of `provider` for an opened `session`, bound to the browser's cookie nonce; returns the flow.
    public func beginEntered(_ session: PendingFlow, provider name: String, cookieNonce nonce: String) async throws(BrokerError)
        -> PendingFlow
    {
        do {
            guard let connect = session.connect else { throw BrokerError.invalidState }
            let provider = try enteredProvider(named: name)
            guard connect.allows(provider.name) else {
                throw BrokerError.badRequest("This connect session does not allow provider \"\(provider.name)\"")
            }
            if connect.scopes != nil {
                throw BrokerError.badRequest("Provider \"\(provider.name)\" is \(provider.kind.rawValue): its credentials have no scopes")
            }
            let createdAt = now()
            let flow = PendingFlow(
                state: Self.makeState(), provider: provider.name, binding: Self.binding(forCookieNonce: nonce),
                returnTo: session.returnTo, createdAt: createdAt, expiresAt: min(createdAt.addingTimeInterval(flowTTL), session.expiresAt),
                endUser: session.endUser, tags: session.tags, connect: connect.at(.flow),
                // Fixed by the session (or a reconnect's account): the form neither asks for them nor takes others.
                settings: session.settings)
            do {
                if let outcomes {
                    try await flows.put(flow, recording: .pending(flow, retention: flowTTL), in: outcomes)
                } else {
                    try await flows.put(flow)
                }
            } catch {
                throw BrokerError(error)
            }
            onFlow(.started(provider: provider.name))
            return flow
        } catch let error as BrokerError {
            if let known = registry.provider(named: name) { onFlow(.failed(provider: known.name, error: error)) }
            throw error
        } catch {
            throw .badRequest("The form could not be started")
        }
    }

    /// Takes the form's flow `state` for the browser that proves its cookie nonce, to check what was entered.
    ///
    /// A state that names no form flow, one past its expiry or one bound to another browser is
    /// ``BrokerError/connectSessionGone``; the flow is gone either way (single use, RFC 9700 §4.2.4) unless
    /// ``returnEntered(_:)`` puts it back.
    public func takeEntered(state: String, cookieNonce nonce: String?) async throws(BrokerError) -> PendingFlow {
        guard Base64URL.isAlphabet(state, count: 16...128) else { throw .connectSessionGone }
        let at = now()
        let taken: PendingFlow?
        do { taken = try await flows.take(state: state, now: at) } catch { throw BrokerError(error) }
        guard let flow = taken, flow.connect?.stage == .flow, !flow.isExpired(at: at),
            registry.provider(named: flow.provider)?.kind.holdsEnteredCredentials == true,
            Self.bindingMatches(flow.binding, proof: nonce)
        else { throw .connectSessionGone }
        return flow
    }

    /// Puts a taken form flow back, unchanged (same state, same expiry), so the person can correct what they entered.
    public func returnEntered(_ flow: PendingFlow) async throws(BrokerError) {
        do { try await flows.put(flow) } catch { throw BrokerError(error) }
    }

    /// Ends a taken form flow with the checked (and verified) `values` stored as account `provider:uid`, with its
    /// checked per-account `settings`: the same end as a callback's (outcome, webhooks, flow events).
    public func finishEntered(
        _ flow: PendingFlow, values: CredentialValues, uid: String, settings: [String: String] = [:], cookieNonce nonce: String?
    ) async -> FlowCompletion {
        await finish(flow, takenAt: now(), bindingProof: nonce) { provider throws(BrokerError) in
            guard provider.kind.holdsEnteredCredentials else { throw .invalidState }
            // The values are the account's access token, as `POST /accounts` stores them (``AccountService/storeEntered``).
            return ExchangeCompletion(
                grant: TokenGrant(accessToken: values.stored, tokenType: provider.kind.rawValue), uid: uid, settings: settings)
        }
    }

    /// Ends a taken form flow as failed with `error` (too many refused credentials): the same end as a failed
    /// callback's (outcome `failed` with the error's code, `flow.failed`, flow events).
    public func failEntered(_ flow: PendingFlow, error: BrokerError, cookieNonce nonce: String?) async -> FlowCompletion {
        await finish(flow, takenAt: now(), bindingProof: nonce) { _ throws(BrokerError) in throw error }
    }

    /// The provider called `name` when it takes entered credentials.
    func enteredProvider(named name: String) throws(BrokerError) -> ProviderConfiguration {
        guard let provider = registry.provider(named: name) else { throw .unknownProvider(name) }
        guard provider.kind.holdsEnteredCredentials, provider.credentials != nil else {
            throw .badRequest("Provider \"\(provider.name)\" is \(provider.kind.rawValue): people sign in to it")
        }
        return provider
    }
}
