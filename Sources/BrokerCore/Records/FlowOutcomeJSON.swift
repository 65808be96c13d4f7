/// The stored shape of a flow outcome, version 1: no secret in it.
package struct FlowOutcomeJSON: Codable, Equatable {
    /// The record format; 1 for this layout.
    package var version: Int
    /// The flow's state.
    package var state: String
    /// The provider key.
    package var provider: String
    /// `pending`, `completed`, `failed` (or `expired`).
    package var status: String
    /// The account id, when completed.
    package var account: String?
    /// The end user's id, when the flow named one.
    package var endUserID: String?
    /// The error code, when failed.
    package var error: String?
    /// `tags` the flow puts on its account; absent when none and in records of earlier versions.
    package var tags: [String: String]? = nil
    /// `expires_at`, RFC 3339.
    package var expiresAt: String
    /// `ended_at`, RFC 3339; absent while pending.
    package var endedAt: String?
    /// `keep_until`, RFC 3339.
    package var keepUntil: String

    /// The snake_case field names on disk.
    enum CodingKeys: String, CodingKey {
        case version, state, provider, status, account, error, tags
        case endUserID = "end_user_id"
        case expiresAt = "expires_at"
        case endedAt = "ended_at"
        case keepUntil = "keep_until"
    }
}
