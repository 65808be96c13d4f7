import BrokerCore
import Foundation

/// The ``StorageBackend`` in this process's memory, for tests that need a store but test no storage.
///
/// Accounts, flows, outbox, lock, backoff and app tokens all live in memory;
/// nothing is durable, so "opening it again" is handing out the same value.
public final class InMemoryStorageBackend: StorageBackend {
    /// The accounts.
    public let memoryAccounts = InMemoryAccountRepository()
    /// The flows and their outcomes.
    public let memoryFlows = InMemoryFlowStore()
    /// The outbox.
    public let memoryOutbox = InMemoryWebhookOutbox()
    public let refreshLock: any RefreshLock
    public let refreshBackoff: any RefreshBackoffStore
    public let appTokens: any AppTokenStore
    public let clientRegistrations: any ClientRegistrationStore = InProcessClientRegistrationStore()

    /// An empty back end on the clock `now`.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        refreshLock = InProcessRefreshLock(now: now)
        refreshBackoff = InProcessRefreshBackoffStore(now: now)
        appTokens = InProcessAppTokenStore(now: now)
    }

    public var accounts: any AccountRepository { memoryAccounts }
    public var flows: any FlowStore { memoryFlows }
    public var flowOutcomes: any FlowOutcomeStore { memoryFlows }
    public var outbox: (any WebhookOutbox)? { memoryOutbox }
    /// None: nothing to back up.
    public var backup: (any AccountBackup)? { nil }
    /// Always available.
    public func unavailability() async -> String? { nil }
    /// Never degraded.
    public func degradation() -> String? { nil }
    /// Nothing runs.
    public func start() {}
    /// Nothing to give up.
    public func stop() {}
}
