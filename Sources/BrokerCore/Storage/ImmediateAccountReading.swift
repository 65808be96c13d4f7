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
