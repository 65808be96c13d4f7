import Foundation

/// Stores a pending flow as human-readable JSON with `"version": 1`, like account records.
enum PendingFlowCodec {
    /// The record format written and read.
    static let version = 1

    /// The JSON document for `flow`.
    static func encode(_ flow: PendingFlow) throws -> [UInt8] {
        try JSONRecord.encode(PendingFlowJSON(
            version: version,
            state: flow.state,
            provider: flow.provider,
            binding: flow.binding,
            codeVerifier: flow.codeVerifier?.value,
            requestToken: flow.requestToken,
            requestTokenSecret: flow.requestTokenSecret?.value,
            returnTo: flow.returnTo,
            createdAt: RFC3339Date.format(flow.createdAt),
            expiresAt: RFC3339Date.format(flow.expiresAt)
        ))
    }

    /// The flow in `bytes`, or ``StoreError/corrupt(path:reason:)`` naming `path`.
    static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> PendingFlow {
        let record = try JSONRecord.decode(PendingFlowJSON.self, from: bytes, path: path)
        guard record.version == version else {
            throw .corrupt(path: path, reason: "unsupported record version \(record.version)")
        }
        return PendingFlow(
            state: record.state,
            provider: record.provider,
            binding: record.binding,
            codeVerifier: record.codeVerifier.map(Secret.init),
            requestToken: record.requestToken,
            requestTokenSecret: record.requestTokenSecret.map(Secret.init),
            returnTo: record.returnTo,
            createdAt: try JSONRecord.date(record.createdAt, field: "created_at", path: path),
            expiresAt: try JSONRecord.date(record.expiresAt, field: "expires_at", path: path)
        )
    }
}

/// The on-disk shape of a pending flow, version 1.
struct PendingFlowJSON: Codable {
    var version: Int
    var state: String
    var provider: String
    var binding: String
    var codeVerifier: String?
    var requestToken: String?
    var requestTokenSecret: String?
    var returnTo: String?
    var createdAt: String
    var expiresAt: String

    enum CodingKeys: String, CodingKey {
        case version, state, provider, binding
        case codeVerifier = "code_verifier"
        case requestToken = "request_token"
        case requestTokenSecret = "request_token_secret"
        case returnTo = "return_to"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }
}
