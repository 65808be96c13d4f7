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
                await clearBackoff(accountID: account.id)
                report(account, .failed(.invalidGrant, message: "the provider rejected the refresh token"))
                return try await markReauthorizationRequired(account.id, rejected: refreshToken)
            }
            let backoff = await recordTransientFailure(accountID: account.id, error)
            await pauseProvider(account.provider, after: error)
            report(account, .failed(.transient, message: error.error.message))
            await reportRefreshFailure(account, error.error, backoff: backoff)
            return .failed(account, error.error)
        }
        let stored = try await store(grant, in: account.id, replacing: refreshToken)
        await clearBackoff(accountID: account.id)
        report(account, .refreshed)
        return .refreshed(stored)
    }

    /// Writes the new tokens atomically, unless the account changed hands meanwhile.
    ///
    /// RFC 6749 §6: a new refresh token replaces the old one, which is never
    /// used again; without one (Google) the old one stays, unless the provider
    /// rotates refresh tokens and so spent it (``TokenGrant/presentedRefreshTokenSpent``). `expires_in` counts
    /// from the injected clock's reading (RFC 6749 §5.1). The write happens only
    /// while the record still holds the refresh token that was presented: a
    /// re-authorization that landed meanwhile is newer and stands.
    nonisolated func store(_ grant: TokenGrant, in id: String, replacing used: Secret) async throws(BrokerError) -> Account {
        let issuedAt = now()
        let stored: Account?
        do {
            stored = try await accounts.update(id: id) { existing in
                guard var account = existing, account.refreshToken == used else { return existing }
                account.accessToken = grant.accessToken
                account.tokenType = grant.tokenType ?? account.tokenType
                account.scope = grant.scope ?? account.scope
                account.refreshToken = grant.refreshToken ?? (grant.presentedRefreshTokenSpent ? nil : used)
                account.expiresAt = Account.expiry(issuedAt: issuedAt, expiresIn: grant.expiresIn)
                account.refreshedAt = issuedAt
                account.updatedAt = issuedAt
                account.status = .active
                return account
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .notFound }
        return stored
    }

    /// Marks the account as needing re-authorization, tokens untouched, if it still holds the rejected refresh token.
    ///
    /// Throws ``BrokerError/reauthorizationRequired`` when it does; an account
    /// re-authorized meanwhile comes back as refreshed.
    nonisolated func markReauthorizationRequired(_ id: String, rejected: Secret) async throws(BrokerError) -> Outcome {
        let at = now()
        let marked = TransformWitness(false)
        let stored: Account?
        do {
            stored = try await accounts.update(id: id) { existing in
                marked.value = false
                guard var account = existing, account.refreshToken == rejected, account.status == .active else { return existing }
                account.status = .reauthorizationRequired
                account.updatedAt = at
                marked.value = true
                return account
            }
        } catch {
            throw BrokerError(error)
        }
        guard let stored else { throw .notFound }
        if stored.status == .reauthorizationRequired {
            // Only the caller whose write changed the status reports it, once per change.
            if marked.value, let events { try? await events.record(.accountReauthorizationRequired, BrokerEventData(account: stored)) }
            throw .reauthorizationRequired
        }
        return .refreshed(stored)
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
    nonisolated func report(_ account: Account, _ result: Event.Result) {
        onEvent(Event(provider: account.provider, accountID: account.id, result: result))
    }
}
