/// Re-encrypts stored accounts with the current key by writing them back through their repository.
///
/// Records are re-encrypted on their next write anyway; this makes it happen
/// now, for `token-broker rekey`. It works on any ``AccountRepository`` whose
/// codec seals with the current key; ``JSONFileAccountRepository`` has
/// ``JSONFileAccountRepository/rekey(codec:)``, which rewrites only stale files.
public enum AccountRekey {
    /// How many accounts are rewritten at once: writes of different ids run in parallel.
    public static let defaultConcurrency = 16

    /// Writes every account of `repository` back with `put`; returns how many were written.
    ///
    /// Each account is read again just before its write, and skipped if it was
    /// deleted meanwhile. A write of the same account by someone else between
    /// that read and the write could be overwritten, so run it before serving.
    public static func run(repository: some AccountRepository, concurrency: Int = defaultConcurrency) async throws(StoreError) -> Int {
        let accounts = try await repository.list(provider: nil)
        return try await count(accounts, concurrency: concurrency) { (account) async throws(StoreError) in
            guard let current = try await repository.get(id: account.accountID) else { return false }
            try await repository.put(current)
            return true
        }
    }

    /// Runs `body` on every account, at most `concurrency` at a time, and counts the calls that returned true.
    ///
    /// The first error stops the run (the calls still running are cancelled and
    /// awaited) and is rethrown; writes already made stay. The children return a
    /// `Result` to a non-throwing task group because a throwing task group
    /// rethrows `any Error`, which would lose the ``StoreError`` type.
    package static func count(
        _ accounts: [Account],
        concurrency: Int,
        _ body: @escaping @Sendable (Account) async throws(StoreError) -> Bool
    ) async throws(StoreError) -> Int {
        let width = max(1, concurrency)
        let outcome = await withTaskGroup(of: Result<Bool, StoreError>.self) { group -> Result<Int, StoreError> in
            var done = 0
            for (position, account) in accounts.enumerated() {
                if position >= width, let result = await group.next() {
                    switch result {
                    case .success(let rewritten): if rewritten { done += 1 }
                    case .failure(let error): group.cancelAll(); return .failure(error)
                    }
                }
                group.addTask {
                    do throws(StoreError) { return .success(try await body(account)) } catch { return .failure(error) }
                }
            }
            for await result in group {
                switch result {
                case .success(let rewritten): if rewritten { done += 1 }
                case .failure(let error): group.cancelAll(); return .failure(error)
                }
            }
            return .success(done)
        }
        return try outcome.get()
    }
}
