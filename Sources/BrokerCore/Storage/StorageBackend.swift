/// Everything the broker keeps, in one store: the seam a storage back end implements.
///
/// What must change together lives in one back end: an account change and the
/// webhook event reporting it are written in one durable step
/// (``AccountRepository/update(id:reporting:to:_:)`` with a sink on ``outbox``), the
/// refresh lock and backoff guard the accounts of the same store, and every
/// replica sharing the store shares all of it. Abilities some stores lack (reads
/// served at once from memory, cheap counts by status, backups through the broker)
/// are members answering nil, never found by a cast.
///
/// Adding a back end: implement this protocol, add it to the configuration's
/// factory, and add one line to the conformance suites' list of back ends.
public protocol StorageBackend: Sendable {
    /// Accounts by id.
    var accounts: any AccountRepository { get }
    /// Pending sign-ins, each taken once.
    var flows: any FlowStore { get }
    /// How finished sign-ins ended, kept as durably as ``flows``.
    var flowOutcomes: any FlowOutcomeStore { get }
    /// Webhook deliveries waiting for their receivers; nil when the back end was opened without one (no webhooks).
    ///
    /// An event sink writing to this outbox lets ``accounts`` record an account
    /// change and its event together; any other sink gets the event after the change.
    var outbox: (any WebhookOutbox)? { get }
    /// The lock that lets one caller at a time refresh an account (or fetch an app token), across every replica of the store.
    var refreshLock: any RefreshLock { get }
    /// When each refresh token (or app token scope) may be tried again after a failure.
    var refreshBackoff: any RefreshBackoffStore { get }
    /// App tokens (client credentials grant) by provider and scope.
    var appTokens: any AppTokenStore { get }
    /// The clients the broker registered at remote MCP servers' authorization servers, one per server, shared by every
    /// replica and kept across restarts.
    var clientRegistrations: any ClientRegistrationStore { get }
    /// Backups of the accounts taken through the broker; nil when the store is backed up by its own means.
    var backup: (any AccountBackup)? { get }

    /// Why the store cannot serve now, as a readiness reason code (`storage_not_writable`), or nil when it can.
    ///
    /// It may touch the disk or the network: readiness asks it off the request path.
    func unavailability() async -> String?
    /// Why the store serves degraded (`account_records_damaged`), or nil; answered from memory.
    func degradation() -> String?
    /// Starts what the store runs in the background (a cache's invalidation connection).
    func start()
    /// Stops it and gives up what the store holds (the data directory's lock); called once, at shutdown.
    func stop()
}

extension StorageBackend {
    /// The accounts' reads served at once from memory; nil when every read suspends.
    public var immediateReading: (any ImmediateAccountReading)? { accounts.immediateReading }
    /// The accounts' counts by status; nil when the store cannot count them cheaply.
    public var statusCounting: (any AccountStatusCounting)? { accounts.statusCounting }
}
