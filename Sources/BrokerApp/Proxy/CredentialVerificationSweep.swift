import BrokerCore
import Foundation
import Synchronization

/// Runs every entered credential's verification request on a schedule (`BROKER_VERIFY_INTERVAL`), so that a key
/// revoked at the provider shows as `invalid` before anyone uses it, and one that works again becomes `active`.
///
/// One replica at a time: a sweep starts only when it takes the store's refresh lock `credential-verification-sweep`,
/// held for the interval and not released, so replicas sharing the store verify each account once per interval. Only
/// the provider's verdict counts: a status among its valid ones passes, any other answer refuses; a transport error
/// or timeout (the provider down) changes nothing. Time comes from the service's clock: a test calls ``runOnce()``.
final class CredentialVerificationSweep: Sendable {
    /// What one sweep did.
    struct Summary: Sendable, Equatable {
        /// Whether this replica ran it (false: another holds the sweep's lock).
        var ran = false
        /// Accounts whose provider accepted the credential.
        var valid = 0
        /// Accounts whose provider refused it.
        var refused = 0
        /// Accounts whose provider could not be asked (transport error, timeout, unusable settings).
        var unreachable = 0
    }

    /// The lock key every replica takes.
    static let lockKey = "credential-verification-sweep"

    let accounts: AccountService
    let registry: ProviderRegistry
    let verifier: CredentialVerifier
    let lock: any RefreshLock
    /// Seconds between sweeps; 0 means the loop never starts.
    let interval: Double
    let logger: BrokerLogger
    /// The running loop, if started.
    private let loop = Mutex<Task<Void, Never>?>(nil)

    init(
        accounts: AccountService, registry: ProviderRegistry, verifier: CredentialVerifier, lock: any RefreshLock, interval: Double,
        logger: BrokerLogger
    ) {
        self.accounts = accounts
        self.registry = registry
        self.verifier = verifier
        self.lock = lock
        self.interval = interval
        self.logger = logger
    }

    /// One sweep, now, when this replica takes the lock: verifies each `active` or `invalid` account of a provider
    /// that declares a verification request, one at a time, and records each verdict.
    func runOnce() async -> Summary {
        var summary = Summary()
        // Held for the interval (at least a minute when run by hand): the next replica's sweep waits for it.
        guard (try? await lock.acquire(key: Self.lockKey, ttl: max(interval, 60))) ?? nil != nil else { return summary }
        summary.ran = true
        guard let all = try? await accounts.list(provider: nil) else {
            logger.log(.warning, "credential verification sweep could not list the accounts", [])
            return summary
        }
        for account in all where account.status == .active || account.status == .invalid {
            guard let named = registry.provider(named: account.provider), named.kind.holdsEnteredCredentials,
                named.credentials?.verification != nil, let values = CredentialValues(stored: account.accessToken)
            else { continue }
            do {
                let provider = try named.applyingSettings(account.settings).0
                guard let outcome = try await verifier.verify(values, provider: provider) else { continue }
                if outcome.valid { summary.valid += 1 } else { summary.refused += 1 }
                let after = try await accounts.recordVerification(id: account.accountID, valid: outcome.valid)
                if let after, after.status != account.status {
                    logger.log(
                        outcome.valid ? .info : .warning, outcome.valid ? "credential valid again" : "credential refused",
                        [("account", .string(account.id)), ("status", .int(outcome.status))])
                }
            } catch {
                summary.unreachable += 1
            }
        }
        return summary
    }

    /// Starts sweeping every ``interval`` seconds; does nothing when it is 0 or the loop runs.
    func start() {
        guard interval > 0 else { return }
        loop.withLock { task in
            guard task == nil else { return }
            let interval = self.interval
            task = Task { [self] in
                while !Task.isCancelled {
                    _ = await runOnce()
                    try? await Task.sleep(for: .seconds(interval))
                }
            }
        }
    }

    /// Stops the loop; a sweep in progress ends at its next suspension.
    func stop() {
        loop.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
