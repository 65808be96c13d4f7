import Foundation

/// Stores a pending flow as human-readable JSON with `"version": 1`, like account records.
///
/// With a `sealer`, the PKCE verifier, the OAuth 1.0a request-token secret, the OpenID Connect nonce and a device code are
/// sealed like account secrets (ChaCha20-Poly1305, the flow's state as associated
/// data) and written as `sealed:v1:<kid>:<nonce>:<ciphertext>`; a plaintext value
/// (a store without a key) is still read.
public enum PendingFlowCodec {
    /// The record format written and read.
    static let version = 1
    /// The prefix of a sealed secret field.
    static let sealedPrefix = "sealed:v1:"

    /// The JSON document for `flow`.
    public static func encode(_ flow: PendingFlow, sealer: EncryptedAccountCodec? = nil) throws(StoreError) -> [UInt8] {
        try JSONRecord.encode(record(for: flow, sealer: sealer))
    }

    /// The flow in `bytes`, or ``StoreError/corrupt(path:reason:)`` naming `path`.
    public static func decode(_ bytes: [UInt8], path: String, sealer: EncryptedAccountCodec? = nil) throws(StoreError) -> PendingFlow {
        try flow(from: JSONRecord.decode(PendingFlowJSON.self, from: bytes, path: path), path: path, sealer: sealer)
    }

    /// The stored shape of `flow`, its secrets sealed when `sealer` is set.
    package static func record(for flow: PendingFlow, sealer: EncryptedAccountCodec?) -> PendingFlowJSON {
        func protect(_ secret: Secret?, _ field: String) -> String? {
            guard let secret else { return nil }
            guard let sealer else { return secret.value }
            let sealed = sealer.seal(secret.value, accountID: "flow:" + flow.state, field: field)
            return sealedPrefix + sealed.kid + ":" + sealed.nonce + ":" + sealed.ct
        }
        return PendingFlowJSON(
            version: version,
            state: flow.state,
            provider: flow.provider,
            binding: flow.binding,
            codeVerifier: protect(flow.codeVerifier, "code_verifier"),
            requestToken: flow.requestToken,
            requestTokenSecret: protect(flow.requestTokenSecret, "request_token_secret"),
            returnTo: flow.returnTo,
            nonce: protect(flow.nonce, "nonce"),
            endUserID: flow.endUser?.id,
            endUserEmail: flow.endUser?.email,
            endUserName: flow.endUser?.name,
            tags: flow.tags.isEmpty ? nil : flow.tags,
            connect: flow.connect.map(ConnectJSON.init),
            scopes: flow.scopes,
            stepUp: flow.stepUpAccountID,
            device: flow.device.map {
                DeviceJSON(
                    deviceCode: protect($0.deviceCode, "device_code") ?? "", interval: $0.interval,
                    nextPollAt: RFC3339Date.format($0.nextPollAt))
            },
            settings: flow.settings.isEmpty ? nil : flow.settings,
            createdAt: RFC3339Date.format(flow.createdAt),
            expiresAt: RFC3339Date.format(flow.expiresAt)
        )
    }

    /// The flow a decoded `record` holds, its sealed secrets opened; errors name `path`.
    package static func flow(from record: PendingFlowJSON, path: String, sealer: EncryptedAccountCodec?) throws(StoreError) -> PendingFlow {
        guard record.version == version else {
            throw .corrupt(path: path, reason: "unsupported record version \(record.version)")
        }
        func reveal(_ value: String?, _ field: String) throws(StoreError) -> Secret? {
            guard let value else { return nil }
            guard value.hasPrefix(sealedPrefix) else { return Secret(value) }
            guard let sealer else { throw .corrupt(path: path, reason: "\(field) is sealed but no encryption key is configured") }
            let parts = value.dropFirst(sealedPrefix.count).split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3 else { throw .corrupt(path: path, reason: "\(field) has a malformed sealed value") }
            let envelope = EncryptedField(kid: String(parts[0]), nonce: String(parts[1]), ct: String(parts[2]))
            return Secret(
                try sealer.open(
                    .sealed(envelope), sealedRecord: true, accountID: "flow:" + record.state,
                    field: field, path: path))
        }
        var connect: ConnectContext?
        if let stored = record.connect {
            guard let context = stored.context else { throw .corrupt(path: path, reason: "unknown connect stage \"\(stored.stage)\"") }
            connect = context
        }
        var device: DeviceContext?
        if let stored = record.device {
            guard let code = try reveal(stored.deviceCode, "device_code"), (1...86_400).contains(stored.interval) else {
                throw .corrupt(path: path, reason: "malformed device sign-in")
            }
            let next = try JSONRecord.date(stored.nextPollAt, field: "next_poll_at", path: path)
            device = DeviceContext(deviceCode: code, interval: stored.interval, nextPollAt: next)
        }
        return PendingFlow(
            state: record.state,
            provider: record.provider,
            binding: record.binding,
            codeVerifier: try reveal(record.codeVerifier, "code_verifier"),
            requestToken: record.requestToken,
            requestTokenSecret: try reveal(record.requestTokenSecret, "request_token_secret"),
            returnTo: record.returnTo,
            nonce: try reveal(record.nonce, "nonce"),
            createdAt: try JSONRecord.date(record.createdAt, field: "created_at", path: path),
            expiresAt: try JSONRecord.date(record.expiresAt, field: "expires_at", path: path),
            endUser: record.endUserID.map { EndUser(id: $0, email: record.endUserEmail, name: record.endUserName) },
            tags: record.tags ?? [:],
            connect: connect,
            scopes: record.scopes,
            stepUpAccountID: record.stepUp,
            device: device,
            settings: record.settings ?? [:]
        )
    }
}
