import BrokerCore
import Foundation

/// The ``StorageBackend`` in the data directory: the account snapshot and journal, the flow journal and the webhook
/// outbox journal, owned by one process.
///
/// One process owns the directory (``DataDirectoryLock``), so the refresh lock,
/// the backoff and the app tokens live in its memory. An account change and its
/// event are made atomic by the outbox's staging protocol (``JournalWebhookOutbox``).
public final class FileStorageBackend: StorageBackend {
    /// The data directory.
    public let dataDirectory: String
    /// The accounts.
    public let repository: JSONFileAccountRepository
    /// Pending flows and their outcomes.
    public let flowJournal: JournalFlowStore
    /// The outbox journal; nil when opened without webhooks.
    public let outboxJournal: JournalWebhookOutbox?
    /// The directory's lock, released by ``stop()``; nil when none was taken (a read-only directory, tests).
    let lock: DataDirectoryLock?
    /// In this process: it owns the directory.
    public let refreshLock: any RefreshLock
    /// In this process.
    public let refreshBackoff: any RefreshBackoffStore
    /// In this process's memory: app tokens are fetched again after a restart.
    public let appTokens: any AppTokenStore
    /// `client-registrations.json` in the data directory.
    public let clientRegistrations: any ClientRegistrationStore

    /// Joins stores opened on `repository`'s data directory; events about account changes are staged in `outbox`.
    ///
    /// The pieces are opened one by one by the caller, who reports what each found at open (the broker's factory).
    public init(
        repository: JSONFileAccountRepository, flows: JournalFlowStore, outbox: JournalWebhookOutbox?, lock: DataDirectoryLock?,
        sealer: EncryptedAccountCodec? = nil, now: @escaping @Sendable () -> Date
    ) {
        dataDirectory = repository.dataDirectory
        self.repository = repository
        flowJournal = flows
        outboxJournal = outbox
        self.lock = lock
        if let outbox { repository.recordEvents(in: outbox) }
        // One process owns the file store, so an in-process lock is enough for single-flight refresh.
        refreshLock = InProcessRefreshLock(now: now)
        refreshBackoff = InProcessRefreshBackoffStore(now: now)
        appTokens = InProcessAppTokenStore(now: now)
        clientRegistrations = FileClientRegistrationStore(directory: repository.dataDirectory, sealer: sealer)
    }

    /// Opens every store under `directory` with defaults (no lock taken), the outbox too when `webhooks`.
    public convenience init(
        directory: String, codec: some AccountRecordCodec = PlainJSONAccountCodec(), sealer: EncryptedAccountCodec? = nil,
        webhooks: Bool = false, now: @escaping @Sendable () -> Date = { Date() }
    ) throws(StoreError) {
        let repository = try JSONFileAccountRepository(directory: directory, codec: codec)
        let flows = try JournalFlowStore(directory: directory, durable: false, sealer: sealer, now: now())
        let outbox = webhooks ? try JournalWebhookOutbox(directory: directory, now: now()) : nil
        self.init(repository: repository, flows: flows, outbox: outbox, lock: nil, sealer: sealer, now: now)
    }

    /// The account snapshot and journal.
    public var accounts: any AccountRepository { repository }
    /// The flow journal.
    public var flows: any FlowStore { flowJournal }
    /// The flow journal, which keeps outcomes too.
    public var flowOutcomes: any FlowOutcomeStore { flowJournal }
    /// The outbox journal, if opened.
    public var outbox: (any WebhookOutbox)? { outboxJournal }
    /// The repository: it writes snapshots of itself.
    public var backup: (any AccountBackup)? { repository }

    /// `storage_not_writable` when a probe file cannot be written and synced in the data directory.
    public func unavailability() async -> String? {
        // The probe touches the disk: keep it off the worker queues and the cooperative pool.
        await DataDirectory.probeWritable(dataDirectory) ? nil : "storage_not_writable"
    }

    /// `account_records_damaged` while any record's sealed secrets do not open.
    public func degradation() -> String? {
        repository.damagedRecordCount > 0 ? "account_records_damaged" : nil
    }

    /// Nothing runs in the background beyond what the stores started at open.
    public func start() {}

    /// Releases the data directory's lock.
    public func stop() { lock?.release() }
}
