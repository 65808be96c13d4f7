/// A repository that can answer a read at once from memory, without suspending.
///
/// The HTTP layer serves `/account` inline on its worker queue when the account is
/// in memory, valid and not due for refresh; anything else takes the asynchronous path.
///
/// Class-bound (every such repository is a class): ``AccountService`` holds one as an optional existential, which is
/// then one reference, copied with a retain on every read rather than through a boxed existential's witnesses.
public protocol ImmediateAccountReading: AnyObject, Sendable {
    /// The account with `id` as held in memory, or nil when absent (or unreadable: the asynchronous path reports why).
    func getNow(id: AccountID) -> Account?

    /// ``getNow(id:)`` in the lighter form a token read needs (``HeldAccount``): the same account, or nil when
    /// ``getNow(id:)`` would answer nil.
    ///
    /// The default wraps ``getNow(id:)``'s account; the file store hands out its index's compact form instead,
    /// without building a whole ``Account``.
    func heldNow(id: AccountID) -> HeldAccount?

    /// Whether ``keepMemo(_:for:)`` keeps anything.
    var keepsMemos: Bool { get }

    /// Keeps `memo` beside the account with `id` as it is held now: later ``heldNow(id:)`` answers carry it
    /// (``HeldAccount/memo``) until the account is written again. A store may keep only some (the file store keeps
    /// the latest 16,384) or none (the default).
    func keepMemo(_ memo: any AnyObject & Sendable, for id: AccountID)
}

extension ImmediateAccountReading {
    /// ``getNow(id:)``'s account, wrapped.
    public func heldNow(id: AccountID) -> HeldAccount? {
        getNow(id: id).map(HeldAccount.init)
    }

    /// None kept.
    public var keepsMemos: Bool { false }

    /// Nothing kept.
    public func keepMemo(_ memo: any AnyObject & Sendable, for id: AccountID) {}
}

/// A store that keeps memos beside its accounts (``ImmediateAccountReading/keepMemo(_:for:)``) and shows one together
/// with its account where the store holds it: the file store.
///
/// A token read of one account among many finds the account's memory in no processor cache. Copying the account out
/// (``ImmediateAccountReading/heldNow(id:)``) retains each of its objects, and every retain waits for that object's
/// memory; a read whose memo answers it needs none of them.
package protocol AccountMemoReading: AnyObject, Sendable {
    /// The memo kept beside the account with `id`, when `accepts` takes it with the account as the store holds it now;
    /// nil when there is none, or the account is absent or not open. `accepts` runs under the store's lock: it must be
    /// quick and must not call the store. Nothing is copied out but the memo.
    func memo(of id: AccountID, where accepts: (borrowing CompactAccount, any AnyObject & Sendable) -> Bool) -> (any AnyObject & Sendable)?
}
