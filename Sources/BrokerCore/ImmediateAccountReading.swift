/// A repository that can answer a read at once from memory, without suspending.
///
/// The HTTP layer serves `/account` inline on its worker queue when the account is
/// in memory, valid and not due for refresh; anything else takes the asynchronous path.
public protocol ImmediateAccountReading: Sendable {
    /// The account with `id` as held in memory, or nil when absent (or unreadable: the asynchronous path reports why).
    func getNow(id: String) -> Account?
}

extension JSONFileAccountRepository: ImmediateAccountReading {
    public func getNow(id: String) -> Account? {
        // A record whose secrets do not open answers nil here; get(id:) then throws the error naming its file.
        (try? current(id)) ?? nil
    }
}
