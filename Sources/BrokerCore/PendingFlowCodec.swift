import Foundation

/// Stores a pending flow as human-readable JSON with `"version": 1`, like account records.
public enum PendingFlowCodec {
    /// The record format written and read.
    static let version = 1

    /// The JSON document for `flow`.
    public static func encode(_ flow: PendingFlow) throws -> [UInt8] {
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
    public static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> PendingFlow {
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
