/// `token-broker rekey` for the records other than accounts whose secrets are sealed as
/// `sealed:v1:<kid>:<nonce>:<ciphertext>` strings: pending flows (PKCE verifier, OAuth 1.0a request-token secret),
/// app tokens (access token) and client registrations at remote MCP servers (client secret).
///
/// A record needs resealing when a value in it is sealed with a key other than
/// the current one, or when it holds a secret in plaintext (written without a
/// key). Either way it is opened with the keyring (so a key missing from it
/// fails the rekey, naming the record, before anything is written) and written
/// again with ``EncryptedAccountCodec``'s current key; its decoded value is unchanged.
public enum SealedRecordRekey {
    /// A kind of record, named as the rekey reports it.
    public enum Kind: String, Sendable, CaseIterable {
        /// Sign-ins in progress.
        case pendingFlows = "pending flows"
        /// App (client credentials) tokens.
        case appTokens = "app tokens"
        /// Client registrations at remote MCP servers.
        case clientRegistrations = "client registrations"
    }

    /// The prefix every sealed value of these records starts with.
    static let sealedPrefix = "sealed:v1:"

    /// The record in `bytes` (stored under `key`, named `path` in errors) sealed again with `codec`'s current key, or nil
    /// when every secret in it already is; throws ``StoreError/corrupt(path:reason:)`` when it does not decode or open.
    public static func resealed(
        _ bytes: [UInt8], kind: Kind, key: String, path: String, codec: EncryptedAccountCodec
    ) throws(StoreError) -> [UInt8]? {
        let again: [UInt8]
        switch kind {
        case .pendingFlows:
            again = try PendingFlowCodec.encode(try PendingFlowCodec.decode(bytes, path: path, sealer: codec), sealer: codec)
        case .appTokens:
            again = AppTokenCodec.encode(try AppTokenCodec.decode(bytes, key: key, path: path, sealer: codec), sealer: codec)
        case .clientRegistrations:
            again = ClientRegistrationCodec.encode(
                try ClientRegistrationCodec.decode(bytes, key: key, path: path, sealer: codec), sealer: codec)
        }
        let stored = keyIDs(in: bytes)
        // Written again, every secret is sealed: more sealed values than stored means some were plaintext.
        let stale = stored.contains { $0 != codec.keyring.current.id } || keyIDs(in: again).count > stored.count
        return stale ? again : nil
    }

    /// The key ids of the sealed values in `bytes`, one per value, read from the text without opening anything.
    public static func keyIDs(in bytes: [UInt8]) -> [String] {
        let prefix = Array(sealedPrefix.utf8)
        var ids: [String] = []
        var index = 0
        while index + prefix.count <= bytes.count {
            guard bytes[index..<index + prefix.count].elementsEqual(prefix) else {
                index += 1
                continue
            }
            var end = index + prefix.count
            while end < bytes.count, bytes[end] != UInt8(ascii: ":"), bytes[end] != UInt8(ascii: "\"") { end += 1 }
            ids.append(String(decoding: bytes[(index + prefix.count)..<end], as: UTF8.self))
            index = end
        }
        return ids
    }
}
