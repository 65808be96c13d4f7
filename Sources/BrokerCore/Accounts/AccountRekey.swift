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
    public static func run(repository: some AccountRepository, concurrency: Int = defaultConcurrency) async throws -> Int {
        let accounts = try await repository.list(provider: nil)
        return try await count(accounts, concurrency: concurrency) { account in
            guard let current = try await repository.get(id: account.id) else { return false }
            try await repository.put(current)
            return true
        }
    }

    /// Runs `body` on every account, at most `concurrency` at a time, and counts the calls that returned true.
    ///
    /// The first error stops the run and is rethrown; writes already made stay.
    package static func count(
        _ accounts: [Account],
        concurrency: Int,
        _ body: @escaping @Sendable (Account) async throws -> Bool
    ) async throws -> Int {
        let width = max(1, concurrency)
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            var done = 0
            for (position, account) in accounts.enumerated() {
                if position >= width, try await group.next() == true { done += 1 }
                group.addTask { try await body(account) }
            }
            for try await rewritten in group where rewritten { done += 1 }
            return done
        }
    }
}
