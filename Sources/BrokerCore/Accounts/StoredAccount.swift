/// An account as a codec hands it to the file store: ready to use, or with its secrets still sealed until first use.
package struct StoredAccount: Sendable {
    /// The account; while ``sealed`` is set, its secrets are empty placeholders and it is never handed out.
    package let account: Account
    /// The secrets still to decrypt, or nil when ``account`` is complete.
    package let sealed: SealedSecrets?

    /// A complete account.
    package init(_ account: Account) {
        self.account = account
        self.sealed = nil
    }

    /// The readable part of an account and its still sealed secrets.
    package init(readable: Account, sealed: SealedSecrets) {
        self.account = readable
        self.sealed = sealed
    }

    /// The account and the secrets still sealed, handed over without a copy.
    package consuming func parts() -> (account: Account, sealed: SealedSecrets?) {
        (account, sealed)
    }

    /// The account, its secrets decrypted when they are still sealed; throws ``StoreError/corrupt(path:reason:)`` naming `path`.
    package func opened(path: @autoclosure () -> String) throws(StoreError) -> Account {
        guard let sealed else { return account }
        return try sealed.open(into: account, path: path())
    }
}
