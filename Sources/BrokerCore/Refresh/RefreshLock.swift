/// A lock that lets one broker replica at a time refresh an account's tokens.
///
/// Taking it returns an owner token; only that token releases it, and a
/// holder that dies loses it when the TTL runs out. The Redis store provides
/// one shared by every replica (`SET NX PX`); ``InProcessRefreshLock`` serves a
/// single process on the file store. Every failure is a ``StoreError``.
public protocol RefreshLock: Sendable {
    /// Takes the lock `key` for `ttl` seconds; returns the owner's token, or nil while someone else holds it.
    func acquire(key: String, ttl: Double) async throws(StoreError) -> String?
    /// Releases the lock `key` if `token` still owns it; returns whether it did.
    @discardableResult
    func release(key: String, token: String) async throws(StoreError) -> Bool
}
