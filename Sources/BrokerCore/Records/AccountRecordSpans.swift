/// Where each member of one record sits in the file's bytes, as ``AccountRecordScanner`` found it; nothing decoded yet.
///
/// A nil text is a member that was absent or `null`. Decoding happens in
/// ``AccountRecordScanner/record(from:)`` (to the full JSON model) or in
/// ``AccountRecordScanner/storedAccount(from:keyring:)`` (straight to the
/// account), so start-up builds only the strings an account keeps.
struct AccountRecordSpans {
    /// A JSON string: its content between the quotes.
    ///
    /// Its place is kept in two 32-bit offsets (the scanner declines a record of 4 GiB or more), so that the spans of a
    /// record, built and handed on for every record at start-up, take half the bytes to copy.
    struct Text {
        /// Where the bytes between the quotes start and end.
        private let start: UInt32
        private let end: UInt32
        /// Whether it holds a backslash escape, so that the raw bytes are not its value.
        let escaped: Bool

        /// The text between the quotes at `range` of a record shorter than 4 GiB.
        init(range: Range<Int>, escaped: Bool) {
            start = UInt32(range.lowerBound)
            end = UInt32(range.upperBound)
            self.escaped = escaped
        }

        /// The bytes between the quotes, escapes not yet decoded.
        var range: Range<Int> { Int(start)..<Int(end) }
    }

    /// A secret member: a plaintext string (records of earlier versions) or a sealed envelope.
    enum SecretValue {
        /// `"…"`.
        case plaintext(Text)
        /// `{"ct": …, "kid": …, "nonce": …}`.
        case sealed(kid: Text, nonce: Text, ct: Text)
    }

    /// `version`.
    var version: Int?
    /// The string members.
    var encryption, id, provider, uid, tokenType, scope, screenName, extras, metadata: Text?
    /// The date members, still RFC 3339 text.
    var expiresAt, createdAt, updatedAt, refreshedAt, issuedAt, refreshTokenExpiresAt: Text?
    /// `status`.
    var status: Text?
    /// The secret members.
    var accessToken, refreshToken, tokenSecret, idToken: SecretValue?
    /// The end user's members.
    var endUserID, endUserEmail, endUserName: Text?
    /// `tags`: each member's name and value, in file order; nil when absent or `null`.
    var tags: [(key: Text, value: Text)]?
    /// `settings`: as ``tags``.
    var settings: [(key: Text, value: Text)]?

    /// Whether every member a record requires is there (JSONDecoder would report the first missing one).
    var hasRequiredMembers: Bool {
        version != nil && provider != nil && uid != nil && accessToken != nil && createdAt != nil
            && updatedAt != nil && status != nil
    }
}
