import BrokerCore
import Synchronization

/// An ``AccountRepository`` in this process's memory, for tests whose subject is not storage.
///
/// It keeps the repository's rules that callers rely on: ids compared as
/// exact bytes, lists sorted by id, and `update` applied atomically (the
/// whole table is locked while the transform runs). Nothing is durable.
public final class InMemoryAccountRepository: AccountRepository {
    private let table = Mutex<[ExactKey: Account]>([:])

    /// An empty repository.
    public init() {}

    /// The account with `id`, or nil.
    public func get(id: AccountID) async -> Account? {
        table.withLock { $0[ExactKey(id.string)] }
    }

    /// Stores `account` under its id.
    public func put(_ account: Account) async {
        table.withLock { $0[ExactKey(account.id)] = account }
    }

    /// Removes and returns the account with `id`.
    public func delete(id: AccountID) async -> Account? {
        table.withLock { $0.removeValue(forKey: ExactKey(id.string)) }
    }

    /// Every account, or those of `provider`, sorted by id.
    public func list(provider: String?) async -> [Account] {
        table.withLock { accounts in
            accounts.values.filter { account in provider.map { ExactKey.same($0, account.provider) } ?? true }
                .sorted { ExactKey.precedes($0.id, $1.id) }
        }
    }

    /// Reads, transforms and writes the account with `id` under the lock; nil deletes it.
    public func update(id: AccountID, _ transform: @Sendable (Account?) throws(StoreError) -> Account?) async throws(StoreError) -> Account?
    {
        try table.withLock { accounts throws(StoreError) -> Account? in
            let key = ExactKey(id.string)
            let changed = try transform(accounts[key])
            accounts[key] = changed
            return changed
        }
    }
}
