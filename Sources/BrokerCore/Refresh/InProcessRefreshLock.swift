import BrokerCrypto
import Foundation
import Synchronization

/// A ``RefreshLock`` held in this process's memory: enough when a single broker owns the store.
///
/// It keeps the Redis lock's rules (owner token, release by the owner only,
/// expiry after the TTL on the injected clock), so code written against it
/// behaves the same with several replicas on Redis.
public final class InProcessRefreshLock: RefreshLock {
    /// Who holds each key (its exact bytes, like the account id in it), and until when.
    private let holders = Mutex<[ExactKey: (token: String, until: Date)]>([:])
    private let now: @Sendable () -> Date
    private let makeToken: @Sendable () -> String

    /// Creates an empty lock table whose TTLs run on `now`; tokens come from `makeToken` (128 random bits by default).
    public init(
        now: @escaping @Sendable () -> Date = { Date() },
        makeToken: @escaping @Sendable () -> String = { SecureRandom.token(byteCount: 16) }
    ) {
        self.now = now
        self.makeToken = makeToken
    }

    /// Takes `key` for `ttl` seconds unless another owner holds it and its TTL has not run out.
    public func acquire(key: String, ttl: Double) async -> String? {
        precondition(ttl.isFinite && ttl > 0, "InProcessRefreshLock.acquire: ttl must be a positive number of seconds")
        let token = makeToken()
        let at = now()
        return holders.withLock { table -> String? in
            if let holder = table[ExactKey(key)], holder.until > at { return nil }
            table[ExactKey(key)] = (token, at.addingTimeInterval(ttl))
            return token
        }
    }

    /// Releases `key` when `token` owns it; a stale owner (its TTL ran out and someone else took the key) releases nothing.
    @discardableResult
    public func release(key: String, token: String) async -> Bool {
        holders.withLock { table -> Bool in
            guard let holder = table[ExactKey(key)], ExactKey.same(holder.token, token) else { return false }
            table[ExactKey(key)] = nil
            return true
        }
    }
}
