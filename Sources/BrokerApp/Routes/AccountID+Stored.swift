import BrokerCore

extension AccountID {
    /// The account a request's `id` names, for a caller already allowed to use it.
    ///
    /// An id without `:` names no stored account (every stored id is
    /// `provider:uid`), so it is refused with notFound, the answer the store gave
    /// it before ids were typed. Checks the bytes without copying them.
    static func stored(_ id: String) throws(BrokerError) -> AccountID {
        guard let parsed = AccountID(id) else { throw .notFound }
        return parsed
    }
}
