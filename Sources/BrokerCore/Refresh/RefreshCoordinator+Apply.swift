import Dispatch
import Foundation

extension RefreshCoordinator {
    /// Calls the provider's refresh grant through `exchange` with `refreshToken` and stores what it says.
    nonisolated func callProvider(
        for account: Account, with exchange: any ProviderExchange,
        presenting refreshToken: Secret
    ) async throws(BrokerError) -> Outcome {
        let grant: TokenGrant
        do {
            grant = try await exchange.refresh(refreshToken: refreshToken)
        } catch {
            if error.error == .reauthorizationRequired {
                await flight.clearBackoff(account.id)
                report(account, .failed(.invalidGrant, message: "the provider rejected the refresh token"))
                return try await markReauthorizationRequired(account.accountID, rejected: refreshToken)
            }
            let backoff = await flight.recordFailure(error, for: account.id, atLeast: policy.cooldown)
            await pauseProvider(account.provider, after: error)
            report(account, .failed(.transient, message: error.error.message))
            // An exhausted account tried by force stays exhausted until a success; it is not given up on twice.
            guard account.status == .active else { return .failed(account, error.error) }
            if policy.hasGivenUp(failingSince: backoff.firstFailureAt, at: now()) {
                // A final answer like a dead refresh token: the backoff goes, the status stays.
                await flight.clearBackoff(account.id)
                return try await markRefreshExhausted(account.accountID, holding: refreshToken, failingSince: backoff.firstFailureAt)
            }
            await reportRefreshFailure(account, error.error, backoff: backoff)
            return .failed(account, error.error)
        }
        let (stored, previousExpiry) = try await store(grant, in: account.accountID, replacing: refreshToken)
        // The failures this success ends, if any: `account.recovered` (an exhausted account's write reported it already).
        if let ended = await flight.takeBackoff(account.id), account.status == .active, stored.status == .active, let events {
            var data = BrokerEventData(account: stored)
            data.failingSince = ended.firstFailureAt
            try? await events.record(.accountRecovered, data)
        }
        var warnings: [Event.Warning] = []
        if let previousExpiry, let newExpiry = stored.expiresAt, newExpiry <= previousExpiry,
            await shouldWarnNotLongerLived(account.id, at: now())
        {
            warnings.append(.notLongerLived)
        }
        if grant.extrasDropped { warnings.append(.extrasDropped) }
        report(account, .refreshed, warnings: warnings)
        return .refreshed(stored)
    }

    /// Whether a token that lives no longer than its predecessor should be logged for `accountID` now: once an hour at most.
    func shouldWarnNotLongerLived(_ accountID: String, at now: Date) -> Bool {
        let key = ExactKey(accountID)
        if let last = lastLifetimeWarning[key], now.timeIntervalSince(last) < Self.lifetimeWarningInterval { return false }
        if lastLifetimeWarning.count >= Self.lifetimeWarningsKept { lastLifetimeWarning.removeAll(keepingCapacity: true) }
        lastLifetimeWarning[key] = now
        return true
    }

    /// Writes the new tokens atomically, unless the account changed hands meanwhile.
    ///
    /// RFC 6749 §6: a new refresh token replaces the old one, which is never
    /// used again; without one (Google) the old one stays, unless the provider
    /// rotates refresh tokens and so spent it (``TokenGrant/presentedRefreshTokenSpent``). `expires_in` counts
    /// from the injected clock's reading (RFC 6749 §5.1). The write happens only
    /// while the record still holds the refresh token that was presented: a
    /// re-authorization that landed meanwhile is newer and stands.
    ///
    /// The refresh token's expiry comes from `refresh_token_expires_in`; without
    /// it a new refresh token has none known, and a kept one keeps its own. The
    /// answer's extras replace the stored ones, except that `id_token` and
    /// `instance_url` stay when the answer leaves them out (``TokenExtras/keptAcrossRefresh``), and so do the
    /// documents the provider's ``ResourceLookup``s fetched at connect (``TokenGrant/extrasKeptAcrossRefresh``).
    /// A `refresh_exhausted` account becomes active, and `account.recovered` is
    /// recorded with that write. Returns the account as stored and the expiry the replaced token had.
    nonisolated func store(
        _ grant: TokenGrant, in id: AccountID, replacing used: Secret
    ) async throws(BrokerError) -> (Account, previousExpiry: Date?) {
        let issuedAt = now()
        let previousExpiry = TransformWitness<Date?>(nil)
        let stored: Account?
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            previousExpiry.value = nil  // A repository may run the transform again; only the last run counts.
            guard var account = existing, account.refreshToken == used else { return existing }
            previousExpiry.value = account.expiresAt
            let refreshTokenKept = grant.refreshToken == nil && !grant.presentedRefreshTokenSpent
            account.accessToken = grant.accessToken
            account.tokenType = grant.tokenType ?? account.tokenType
            account.scope = grant.scope ?? account.scope
            account.refreshToken = grant.refreshToken ?? (grant.presentedRefreshTokenSpent ? nil : used)
            account.expiresAt = Account.expiry(issuedAt: issuedAt, expiresIn: grant.expiresIn)
            account.refreshTokenExpiresAt =
                Account.expiry(issuedAt: issuedAt, expiresIn: grant.refreshTokenExpiresIn)
                ?? (refreshTokenKept ? account.refreshTokenExpiresAt : nil)
            account.idToken = grant.idToken ?? account.idToken
            account.extras = TokenExtras.merged(
                old: account.extras, new: grant.extras, also: grant.extrasKeptAcrossRefresh)
            account.issuedAt = issuedAt
            account.refreshedAt = issuedAt
            account.updatedAt = issuedAt
            account.status = .active
            return account
        }
        // The provider has answered, and may have spent the refresh token presented: its successor exists only here.
        // A store that is briefly unavailable (a database failing over, a disk freeing up) is therefore tried again
        // for up to half the lock's lifetime, while no other replica can take the lock and present the spent token.
        // The transform is safe to run again: after a write that landed but whose answer was lost, the stored refresh
        // token is no longer `used`, and the account is answered as stored.
        let retryUntil = DispatchTime.now().uptimeNanoseconds &+ UInt64(max(0, policy.lockTTL / 2) * 1_000_000_000)
        var pause: UInt64 = 100_000_000
        while true {
            do throws(StoreError) {
                if let events {
                    stored = try await accounts.update(id: id, reporting: Self.recoveryEvent, to: events, transform)
                } else {
                    stored = try await accounts.update(id: id, transform)
                }
                break
            } catch {
                guard case .unavailable = error, DispatchTime.now().uptimeNanoseconds &+ pause < retryUntil else {
                    throw BrokerError(error)
                }
                onStoreRetry(id)
                try? await Task.sleep(nanoseconds: pause)
                pause = min(pause * 2, 2_000_000_000)
            }
        }
        guard let stored else { throw .notFound }
        return (stored, previousExpiry.value)
    }

    /// Marks the account as needing re-authorization, tokens untouched, if it still holds the rejected refresh token.
    ///
    /// Throws ``BrokerError/reauthorizationRequired`` when it does; an account
    /// re-authorized meanwhile comes back as refreshed. The write that changes
    /// the status carries `account.reauthorization_required` in the same
    /// durable step, so the event is reported once per change.
    nonisolated func markReauthorizationRequired(_ id: AccountID, rejected: Secret) async throws(BrokerError) -> Outcome {
        let at = now()
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            guard var account = existing, account.refreshToken == rejected, account.status == .active else { return existing }
            account.status = .reauthorizationRequired
            account.updatedAt = at
            return account
        }
        let stored: Account?
        do {
            if let events {
                stored = try await accounts.update(id: id, reporting: Self.reauthorizationEvent, to: events, transform)
            } else {
                stored = try await accounts.update(id: id, transform)
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .notFound }
        if stored.status == .reauthorizationRequired { throw .reauthorizationRequired }
        return .refreshed(stored)
    }

    /// Marks the account `refresh_exhausted`, tokens untouched, if it is still active and holds the refresh token
    /// that kept failing; `account.refresh_exhausted` is recorded with that write.
    ///
    /// Throws ``BrokerError/refreshExhausted`` when the account is (now) exhausted; one signed in again meanwhile
    /// comes back as refreshed.
    nonisolated func markRefreshExhausted(_ id: AccountID, holding used: Secret, failingSince: Date?) async throws(BrokerError) -> Outcome {
        let at = now()
        let transform: @Sendable (Account?) throws(StoreError) -> Account? = { existing in
            guard var account = existing, account.refreshToken == used, account.status == .active else { return existing }
            account.status = .refreshExhausted
            account.updatedAt = at
            return account
        }
        let event: AccountChangeEvent = { before, after in
            guard let before, let after, before.status == .active, after.status == .refreshExhausted else { return nil }
            var data = BrokerEventData(account: after)
            data.failingSince = failingSince
            return (.accountRefreshExhausted, data)
        }
        let stored: Account?
        do {
            if let events {
                stored = try await accounts.update(id: id, reporting: event, to: events, transform)
            } else {
                stored = try await accounts.update(id: id, transform)
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .notFound }
        switch stored.status {
        case .refreshExhausted: throw .refreshExhausted
        case .reauthorizationRequired: throw .reauthorizationRequired
        // Only entered credentials become invalid, and they have no refresh token: not reached by a refresh.
        case .invalid: throw .accountInvalid
        case .active: return .refreshed(stored)
        }
    }

    /// `account.recovered` when a refresh turns a `refresh_exhausted` account active again.
    static let recoveryEvent: AccountChangeEvent = { before, after in
        guard let before, let after, before.status == .refreshExhausted, after.status == .active else { return nil }
        return (.accountRecovered, BrokerEventData(account: after))
    }

    /// `account.reauthorization_required` when the change is the one from active to needing re-authorization.
    static let reauthorizationEvent: AccountChangeEvent = { before, after in
        guard let before, let after, before.status == .active, after.status == .reauthorizationRequired else { return nil }
        return (.accountReauthorizationRequired, BrokerEventData(account: after))
    }

    /// Records `account.refresh_failed` when a transient failure leaves the token to expire before the next try.
    ///
    /// Once per run of failures: at the first failure when the token will not
    /// last until the next try, or at the failure where the token stops lasting
    /// that long; failures after it, with the token expired, report nothing new.
    nonisolated func reportRefreshFailure(_ account: Account, _ error: BrokerError, backoff: RefreshBackoff) async {
        guard let events, let expiresAt = account.expiresAt, expiresAt <= backoff.notBefore else { return }
        guard backoff.failures == 1 || expiresAt > now() else { return }
        var data = BrokerEventData(account: account)
        data.error = error.code
        data.message = error.message
        data.nextRetryAt = backoff.notBefore
        try? await events.record(.accountRefreshFailed, data)
    }

    /// Tells ``onEvent`` about one provider call.
    nonisolated func report(_ account: Account, _ result: Event.Result, warnings: [Event.Warning] = []) {
        var event = Event(provider: account.provider, accountID: account.accountID, result: result)
        event.warnings = warnings
        onEvent(event)
    }
}
