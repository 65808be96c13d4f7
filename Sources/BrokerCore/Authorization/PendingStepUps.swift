import Foundation
import Synchronization

/// The step-up flows this process started, by account and scope set, so that every `403 insufficient_scope` for the
/// same account and scopes hands out the one flow still pending instead of starting another.
///
/// An agent that retries a read it lacks scopes for would otherwise leave a pending flow behind on every try, each
/// holding a PKCE verifier in the store until it expires. A remembered flow is handed out again only while the flow
/// store still has it pending (not taken by its callback, not expired); otherwise a new one starts and replaces it.
/// Kept in memory: replicas each keep their own, so N replicas start at most N flows for one account and scope set.
final class PendingStepUps: Sendable {
    /// The most remembered; past it, expired entries go, and everything if that is not enough.
    static let capacity = 10_000
    private let table = Mutex<[String: AuthorizationStart]>([:])

    /// The key of `account` asking for `scopes`, whatever their order.
    static func key(account: AccountID, scopes: [String]) -> String {
        account.string + "\u{0}" + Set(scopes).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.joined(separator: " ")
    }

    /// The flow remembered under `key` unless it expired by `now`.
    func remembered(_ key: String, now: Date) -> AuthorizationStart? {
        table.withLock { table in
            guard let start = table[key] else { return nil }
            guard start.expiresAt > now else {
                table[key] = nil
                return nil
            }
            return start
        }
    }

    /// Remembers `start` under `key`.
    func remember(_ start: AuthorizationStart, under key: String, now: Date) {
        table.withLock { table in
            if table.count >= Self.capacity {
                table = table.filter { $0.value.expiresAt > now }
                if table.count >= Self.capacity { table.removeAll() }
            }
            table[key] = start
        }
    }
}
