import BrokerCrypto
import Foundation

/// How a callback ended: the flow it took (nil when the state matched none) and the account stored or the error.
public struct FlowCompletion: Sendable {
    /// The flow the callback's state took.
    public var flow: PendingFlow?
    /// The account, or why there is none.
    public var result: Result<Account, BrokerError>
}

extension AuthorizationService {
    /// Completes a flow from the callback's query items and stores the account.
    ///
    /// `state` is ``flowState(callbackState:)`` of the query's state (or, for
    /// OAuth 1.0a, the one in the flow cookie); `bindingProof` is the flow
    /// cookie's nonce, nil without a cookie; `query` is the callback's query as
    /// it came. Order: take the flow (single use) → missing or expired → binding
    /// → the provider kind's exchange checks the query, trades it for tokens and
    /// names the user → store with its event. Every refusal before the trade makes no provider call.
    ///
    /// ``onFlow`` hears of the outcome: completed or failed under the flow's
    /// provider, or unmatched when the state names no pending flow. The event
    /// (`account.connected` or `account.reconnected`) is written in the same
    /// durable step as the account (``AccountRepository/update(id:reporting:to:_:)``);
    /// when either cannot be written the call fails with
    /// ``BrokerError/storageUnavailable(_:)``.
    /// A flow that was found but fails from then on is reported as
    /// `flow.failed`; a state that finds no flow sends no event, since anyone
    /// can send one.
    public func complete(state: String, bindingProof: String?, query: [String: String]) async throws(BrokerError) -> (
        account: Account, returnTo: String?
    ) {
        let completion = await completion(state: state, bindingProof: bindingProof, query: query)
        let account = try completion.result.get()
        return (account, completion.flow?.returnTo)
    }

    /// ``complete(state:bindingProof:query:)`` with the flow it took, when there was one, beside its result, so that
    /// a failure can still be reported to where the flow came from (a connect session's opener).
    public func completion(state: String, bindingProof: String?, query: [String: String]) async -> FlowCompletion {
        let takenAt = now()
        // RFC 9700 §4.2.4 / RFC 6749 §10.12: the state is consumed by this take, whatever follows.
        let taken: PendingFlow?
        do { taken = try await flows.take(state: state, now: takenAt) } catch {
            return FlowCompletion(flow: nil, result: .failure(BrokerError(error)))
        }
        // A connect session or provider choice is not a sign-in: its key is never a state to complete.
        // Nor is a connect session's form (``beginEntered(_:provider:cookieNonce:)``): it ends by its own POST.
        guard let flow = taken, flow.connect.map({ $0.stage == .flow }) ?? true,
            registry.provider(named: flow.provider)?.kind.holdsEnteredCredentials != true
        else {
            onFlow(.unmatched)
            return FlowCompletion(flow: nil, result: .failure(.invalidState))
        }
        return await finish(flow, takenAt: takenAt, bindingProof: bindingProof) { provider throws(BrokerError) in
            try await context.exchange(for: provider).complete(callback: query, flow: flow)
        }
    }

    /// Ends a taken `flow` as a callback or a device poll does: expiry and binding checks → `obtain` (the provider
    /// kind's exchange) → reconnect check → store with its event → outcome, `onFlow` and the flow webhook.
    func finish(
        _ flow: PendingFlow, takenAt: Date, bindingProof: String?,
        obtain: (ProviderConfiguration) async throws(BrokerError) -> ExchangeCompletion
    ) async -> FlowCompletion {
        let account: Account
        var extrasDropped = false
        do throws(BrokerError) {
            guard !flow.isExpired(at: takenAt) else { throw .invalidState }
            guard Self.bindingMatches(flow.binding, proof: bindingProof) else { throw .invalidState }
            // A form flow's provider takes entered credentials and has no sign-in to be configured for.
            let named = try connectableProvider(named: flow.provider)
            // The flow's settings fill the token and user URLs as they filled the authorize URL. A form flow of entered
            // credentials calls no provider URL here.
            let provider = named.kind.holdsEnteredCredentials && flow.settings.isEmpty ? named : try named.applyingSettings(flow.settings).0
            let completed = try await obtain(provider)
            extrasDropped = completed.grant.extrasDropped
            if let renewed = flow.connect?.reconnectAccountID ?? flow.stepUpAccountID,
                AccountID(provider: provider.name, uid: completed.uid).string != renewed
            {
                throw .reconnectMismatch
            }
            // A flow that asked for scopes itself gets all of them or stores nothing: a partial grant (RFC 6749 §3.3
            // lets the server grant fewer) leaves the account as it was. Without `scope` in the answer, the grant is
            // what was asked (§5.1).
            if let asked = flow.scopes, let granted = completed.grant.scope {
                let missing = Scopes.missing(asked, from: Scopes.parse(granted))
                guard missing.isEmpty else { throw .insufficientScope(missing: missing) }
            }
            (account, _) = try await store(
                completed.grant, provider: provider.name, uid: completed.uid, screenName: completed.screenName, owner: flow,
                asked: flow.scopes ?? provider.scopes, settings: completed.settings)
        } catch {
            onFlow(.failed(provider: flow.provider, error: error))
            await reportFailure(of: flow, error)
            await recordOutcome(of: flow, at: takenAt, accountID: nil, error: error)
            return FlowCompletion(flow: flow, result: .failure(error))
        }
        await recordOutcome(of: flow, at: now(), accountID: account.accountID, error: nil)
        await reportCompletion(of: flow, account: account)
        onFlow(.completed(provider: flow.provider))
        if extrasDropped { onFlow(.extrasDropped(provider: flow.provider)) }
        return FlowCompletion(flow: flow, result: .success(account))
    }

    /// Replaces the flow's pending outcome by how it ended: completed with `accountID`, or failed with `error`'s code.
    ///
    /// A flow taken after its expiry keeps its pending outcome, which reads as
    /// expired. The account (or the failure) stands whether or not this write
    /// succeeds: a back end that cannot read the outcome sees the flow expire.
    private func recordOutcome(of flow: PendingFlow, at endedAt: Date, accountID: AccountID?, error: BrokerError?) async {
        guard let outcomes, !flow.isExpired(at: endedAt) || accountID != nil else { return }
        let outcome = FlowOutcome(
            state: flow.state, provider: flow.provider, status: accountID == nil ? .failed : .completed,
            accountID: accountID, endUserID: FlowOutcome.endUserID(of: flow), tags: flow.tags, error: error?.code,
            expiresAt: flow.expiresAt, endedAt: endedAt, keepUntil: endedAt.addingTimeInterval(flowTTL))
        try? await outcomes.record(outcome)
    }

    /// What is known of the flow with `state`: its outcome as reported now (a pending flow past its
    /// expiry reads ``FlowOutcome/Status/expired``), or nil when the state is unknown or long gone.
    public func outcome(state: String) async throws(BrokerError) -> FlowOutcome? {
        guard let outcomes else { return nil }
        let at = now()
        do {
            guard var outcome = try await outcomes.outcome(state: state, now: at) else { return nil }
            outcome.status = outcome.status(at: at)
            if outcome.endedAt == nil, outcome.status == .expired { outcome.endedAt = outcome.expiresAt }
            return outcome
        } catch {
            throw BrokerError(error)
        }
    }

    /// Records `flow.failed` for `flow`; a failure to record it is the sink's to report, and does not hide `error`.
    private func reportFailure(of flow: PendingFlow, _ error: BrokerError) async {
        guard let events else { return }
        var data = BrokerEventData(provider: flow.provider)
        data.endUserID = flow.endUser?.id
        data.state = flow.state
        data.tags = flow.tags.isEmpty ? nil : flow.tags
        data.error = error.code
        data.message = error.message
        try? await events.record(.flowFailed, data)
    }

    /// Sends `flow.completed` for a flow a back end started (a connect session, `POST /authorize`): the state beside
    /// the account, so that back end matches the outcome without polling `/flows/{state}`. A flow a browser started
    /// on its own has no state a back end knows, and its `account.connected` says all there is.
    private func reportCompletion(of flow: PendingFlow, account: Account) async {
        guard let events, flow.connect != nil || flow.binding == Self.apiBinding else { return }
        var data = BrokerEventData(provider: flow.provider)
        data.state = flow.state
        data.accountID = account.accountID
        data.uid = account.uid
        data.endUserID = account.endUser?.id
        data.tags = account.tags.isEmpty ? nil : account.tags
        data.status = FlowOutcome.Status.completed.rawValue
        try? await events.record(.flowCompleted, data)
    }

    /// Whether `proof` (the flow cookie's nonce) hashes to the flow's binding, compared in constant time.
    ///
    /// RFC 6749 §10.12: the state is bound to the user agent; a flow bound to
    /// ``apiBinding`` was started by a back end and needs no proof.
    static func bindingMatches(_ binding: String, proof: String?) -> Bool {
        if binding == apiBinding { return true }
        guard let proof, !proof.isEmpty else { return false }
        return ConstantTime.equals(Self.binding(forCookieNonce: proof), binding)
    }

    /// Writes the account: a new record, or the same id updated (createdAt kept, updatedAt now, status active),
    /// with its `account.connected` or `account.reconnected` event when there is a sink; returns it and whether a
    /// record was there before.
    ///
    /// A refresh token is kept from the earlier record when the new grant has
    /// none: Google, for one, issues it only at the first consent. The end user
    /// and tags come from `owner` when it assigns them (``PendingFlow/assignsOwner``,
    /// replacing both), else they are kept from the earlier record: a browser
    /// re-authorizing cannot move or relabel an account. The metadata is always
    /// kept: only `PATCH /account` sets it.
    ///
    /// The granted scope is the answer's `scope`, else (RFC 6749 §5.1: the same as asked) the `asked` scopes joined by spaces.
    func store(
        _ grant: TokenGrant, provider: String, uid: String, screenName: String?, owner: PendingFlow? = nil, asked: [String] = [],
        settings: [String: String]? = nil
    ) async throws(BrokerError)
        -> (
            Account, existed: Bool
        )
    {
        let issuedAt = now()
        let id = AccountID(provider: provider, uid: uid)
        let existed = TransformWitness(false)
        let stored: Account?
        let assigned = owner.flatMap { $0.assignsOwner ? (endUser: $0.endUser, tags: $0.tags) : nil }
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            existed.value = existing != nil
            return Account(
                provider: provider,
                uid: uid,
                accessToken: grant.accessToken,
                tokenType: grant.tokenType,
                scope: grant.scope ?? (asked.isEmpty ? nil : asked.joined(separator: " ")),
                refreshToken: grant.refreshToken ?? existing?.refreshToken,
                tokenSecret: grant.tokenSecret,
                screenName: screenName ?? existing?.screenName,
                // RFC 6749 §5.1: expires_in counts from when the response was generated.
                expiresAt: Account.expiry(issuedAt: issuedAt, expiresIn: grant.expiresIn),
                createdAt: existing?.createdAt ?? issuedAt,
                updatedAt: issuedAt,
                refreshedAt: nil,
                status: .active,
                issuedAt: issuedAt,
                refreshTokenExpiresAt: Account.expiry(issuedAt: issuedAt, expiresIn: grant.refreshTokenExpiresIn)
                    ?? (grant.refreshToken == nil ? existing?.refreshTokenExpiresAt : nil),
                idToken: grant.idToken,
                extras: grant.extras,
                endUser: assigned.map(\.endUser) ?? existing?.endUser,
                tags: assigned.map(\.tags) ?? existing?.tags ?? [:],
                // The settings the sign-in was made with (the credential form's, else the flow's), which later
                // refreshes, revocation and the proxy fill in.
                settings: settings ?? owner.map(\.settings).flatMap { $0.isEmpty ? nil : $0 } ?? existing?.settings ?? [:],
                // What a back end set by `PATCH /account` outlives a new sign-in.
                metadata: existing?.metadata
            )
        }
        do {
            if let events {
                stored = try await accounts.update(id: id, reporting: Self.connectionEvent, to: events, transform)
            } else {
                stored = try await accounts.update(id: id, transform)
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .storageUnavailable("update of account \(id) stored nothing") }
        return (stored, existed.value)
    }

    /// `account.connected` for an account that was not there, `account.reconnected` for one that was.
    static let connectionEvent: AccountChangeEvent = { before, after in
        guard let after else { return nil }
        return (before == nil ? .accountConnected : .accountReconnected, BrokerEventData(account: after))
    }
}
