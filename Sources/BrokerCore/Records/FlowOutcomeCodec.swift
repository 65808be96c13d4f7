import Foundation

/// Stores a flow outcome as JSON with `"version": 1`, like pending flows.
public enum FlowOutcomeCodec {
    /// The record format written and read.
    static let version = 1

    /// The JSON document for `outcome`.
    public static func encode(_ outcome: FlowOutcome) throws(StoreError) -> [UInt8] {
        try JSONRecord.encode(record(for: outcome))
    }

    /// The outcome in `bytes`, or ``StoreError/corrupt(path:reason:)`` naming `path`.
    public static func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> FlowOutcome {
        try outcome(from: JSONRecord.decode(FlowOutcomeJSON.self, from: bytes, path: path), path: path)
    }

    /// The stored shape of `outcome`.
    package static func record(for outcome: FlowOutcome) -> FlowOutcomeJSON {
        FlowOutcomeJSON(
            version: version, state: outcome.state, provider: outcome.provider, status: outcome.status.rawValue,
            account: outcome.accountID?.string, endUserID: outcome.endUserID, error: outcome.error,
            tags: outcome.tags.isEmpty ? nil : outcome.tags,
            expiresAt: RFC3339Date.format(outcome.expiresAt), endedAt: outcome.endedAt.map(RFC3339Date.format),
            // Rounded up: an outcome is kept at least as long as asked, never a fraction of a second less.
            keepUntil: RFC3339Date.format(Date(timeIntervalSince1970: outcome.keepUntil.timeIntervalSince1970.rounded(.up))))
    }

    /// The outcome a decoded `record` holds; errors name `path`.
    package static func outcome(from record: FlowOutcomeJSON, path: String) throws(StoreError) -> FlowOutcome {
        guard record.version == version else {
            throw .corrupt(path: path, reason: "unsupported record version \(record.version)")
        }
        guard let status = FlowOutcome.Status(rawValue: record.status) else {
            throw .corrupt(path: path, reason: "field \"status\" is not a flow status")
        }
        var accountID: AccountID?
        if let account = record.account {
            guard let id = AccountID(account) else { throw .corrupt(path: path, reason: "field \"account\" is not an account id") }
            accountID = id
        }
        return FlowOutcome(
            state: record.state, provider: record.provider, status: status, accountID: accountID,
            endUserID: record.endUserID, tags: record.tags ?? [:], error: record.error,
            expiresAt: try JSONRecord.date(record.expiresAt, field: "expires_at", path: path),
            endedAt: try JSONRecord.date(record.endedAt, field: "ended_at", path: path),
            keepUntil: try JSONRecord.date(record.keepUntil, field: "keep_until", path: path))
    }
}
