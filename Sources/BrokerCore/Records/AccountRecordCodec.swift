/// Turns an account into a whole file's bytes and back: the seam where encryption at rest plugs in.
public protocol AccountRecordCodec: Sendable {
    /// The complete file content for `account`.
    func encode(_ account: Account) throws(StoreError) -> [UInt8]
    /// The account in `bytes`; throws ``StoreError/corrupt(path:reason:)`` naming `path` when they do not parse.
    func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Account
    /// The account as `decode(encode(account))` returns it (dates kept to the millisecond), so memory matches a restart.
    ///
    /// The default does that round trip; a codec that can get there without
    /// encoding, sealing, opening and parsing again does.
    func stored(_ account: Account, path: String) throws(StoreError) -> Account
    /// Whether every record this codec writes has its secrets sealed, so a store it wrote holds no plaintext record.
    var sealsSecrets: Bool { get }
    /// How this codec hands a store an account whose secrets stay sealed until first used; nil when it cannot (the default).
    var deferredDecoding: DeferredAccountDecoding? { get }
}

extension AccountRecordCodec {
    /// False: a codec seals nothing unless it says so.
    public var sealsSecrets: Bool { false }

    /// None: every record is decoded in full.
    public var deferredDecoding: DeferredAccountDecoding? { nil }

    /// `decode(encode(account))`.
    public func stored(_ account: Account, path: String) throws(StoreError) -> Account {
        try decode(encode(account), path: path)
    }
}
