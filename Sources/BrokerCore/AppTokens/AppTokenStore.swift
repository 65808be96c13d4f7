import Foundation
import Synchronization

/// Where app tokens are cached between requests: in this process, or in Redis shared by every replica.
///
/// An app token is no account: it lives here, never in the account
/// repository, so it is not listed, swept or shown. Every failure is a ``StoreError``.
public protocol AppTokenStore: Sendable {
    /// The token cached under `key` (``AppToken/key``), or nil when there is none or it was let go.
    func token(for key: String) async throws(StoreError) -> AppToken?
    /// Caches `token` under its key, replacing any other, until `keepUntil`; `now` is the caller's clock reading.
    func store(_ token: AppToken, keepUntil: Date, at now: Date) async throws(StoreError)
}

/// An ``AppTokenStore`` in this process's memory: what a single broker on the file store uses.
///
/// A restart forgets the tokens, and the first request after it asks the
/// provider once for a new one: cheaper than keeping another secret on disk.
public final class InProcessAppTokenStore: AppTokenStore {
    /// Each key's token and when to let it go.
    private let table = Mutex<[ExactKey: (token: AppToken, keepUntil: Date)]>([:])
    private let now: @Sendable () -> Date

    /// Creates an empty store whose entries lapse on `now`.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The token under `key` unless its time ran out.
    public func token(for key: String) async -> AppToken? {
        let at = now()
        return table.withLock { entries in
            guard let entry = entries[ExactKey(key)] else { return nil }
            guard at < entry.keepUntil else {
                entries[ExactKey(key)] = nil
                return nil
            }
            return entry.token
        }
    }

    /// Keeps `token` until `keepUntil`; lapsed entries of other keys go too.
    public func store(_ token: AppToken, keepUntil: Date, at now: Date) async {
        table.withLock { entries in
            entries = entries.filter { now < $0.value.keepUntil }
            entries[ExactKey(token.key)] = (token, keepUntil)
        }
    }
}
