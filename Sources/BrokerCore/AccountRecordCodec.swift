/// Turns an account into a whole file's bytes and back: the seam where encryption at rest plugs in.
public protocol AccountRecordCodec: Sendable {
    /// The complete file content for `account`.
    func encode(_ account: Account) throws -> [UInt8]
    /// The account in `bytes`; throws ``StoreError/corrupt(path:reason:)`` naming `path` when they do not parse.
    func decode(_ bytes: [UInt8], path: String) throws -> Account
}
