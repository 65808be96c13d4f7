import BrokerCore
import Foundation

/// A pending flow as stored in Redis: the same version 1 JSON layout as the file flow store.
///
/// BrokerCore's `PendingFlowCodec` is internal; until it is public this
/// mirrors its fields (snake_case, RFC 3339 UTC dates to the millisecond).
struct RedisFlowRecord: Codable {
    /// The record format written and read.
    static let currentVersion = 1

    /// The record format; 1 for this layout.
    var version: Int
    /// The flow key.
    var state: String
    /// The provider key.
    var provider: String
    /// What binds the flow to one browser or caller.
    var binding: String
    /// `code_verifier` (PKCE), plaintext, as in the file store.
    var codeVerifier: String?
    /// `request_token`.
    var requestToken: String?
    /// `request_token_secret`, plaintext, as in the file store.
    var requestTokenSecret: String?
    /// `return_to`.
    var returnTo: String?
    /// `created_at`, RFC 3339.
    var createdAt: String
    /// `expires_at`, RFC 3339.
    var expiresAt: String

    /// The snake_case field names.
    enum CodingKeys: String, CodingKey {
        case version, state, provider, binding
        case codeVerifier = "code_verifier"
        case requestToken = "request_token"
        case requestTokenSecret = "request_token_secret"
        case returnTo = "return_to"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    /// The JSON bytes for `flow`.
    static func encode(_ flow: PendingFlow) throws -> [UInt8] {
        let record = RedisFlowRecord(
            version: currentVersion,
            state: flow.state,
            provider: flow.provider,
            binding: flow.binding,
            codeVerifier: flow.codeVerifier?.value,
            requestToken: flow.requestToken,
            requestTokenSecret: flow.requestTokenSecret?.value,
            returnTo: flow.returnTo,
            createdAt: RFC3339Date.format(flow.createdAt),
            expiresAt: RFC3339Date.format(flow.expiresAt)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(record))
    }

    /// The flow in `bytes`; throws ``StoreError/corrupt(path:reason:)`` naming `key` when they do not parse.
    static func decode(_ bytes: [UInt8], key: String) throws(StoreError) -> PendingFlow {
        let path = "redis key \(key)"
        let record: RedisFlowRecord
        do {
            record = try JSONDecoder().decode(RedisFlowRecord.self, from: Data(bytes))
        } catch {
            throw .corrupt(path: path, reason: "not a pending flow record")
        }
        guard record.version == currentVersion else {
            throw .corrupt(path: path, reason: "unsupported record version \(record.version)")
        }
        guard let createdAt = RFC3339Date.parse(record.createdAt), let expiresAt = RFC3339Date.parse(record.expiresAt) else {
            throw .corrupt(path: path, reason: "created_at or expires_at is not an RFC 3339 date")
        }
        return PendingFlow(
            state: record.state,
            provider: record.provider,
            binding: record.binding,
            codeVerifier: record.codeVerifier.map(Secret.init),
            requestToken: record.requestToken,
            requestTokenSecret: record.requestTokenSecret.map(Secret.init),
            returnTo: record.returnTo,
            createdAt: createdAt,
            expiresAt: expiresAt
        )
    }
}
