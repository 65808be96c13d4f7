/// The user of the back end an account belongs to, as the back end named them when it started the flow.
///
/// Only an API-key caller (`POST /authorize`) can set it: a browser cannot
/// choose whom it belongs to. None of it is a secret, but the email is
/// personal data and is kept out of logs.
public struct EndUser: Sendable, Equatable {
    /// `end_user_id`: 1–256 bytes of printable ASCII, stable per user of the back end.
    public var id: String
    /// `end_user_email`: 3–320 bytes of UTF-8 holding an `@`, no control characters; not checked further.
    public var email: String?
    /// `end_user_name`: 1–256 bytes of UTF-8 without control characters.
    public var name: String?

    /// Creates an end user; check caller input with ``validated(id:email:name:)`` instead.
    public init(id: String, email: String? = nil, name: String? = nil) {
        self.id = id
        self.email = email
        self.name = name
    }

    /// The longest `end_user_id`, in bytes.
    public static let maximumIDLength = 256
    /// The longest `end_user_email`, in bytes (RFC 5321 §4.5.3.1: a 64-byte local part, `@`, a 255-byte domain).
    public static let maximumEmailLength = 320
    /// The longest `end_user_name`, in bytes.
    public static let maximumNameLength = 256

    /// The end user a caller described, or nil when it gave none of the three; a bad value is refused naming its field.
    ///
    /// An email or a name without an id is refused: they describe an end user, and the id is what names one.
    public static func validated(id: String?, email: String?, name: String?) throws(BrokerError) -> EndUser? {
        guard let id else {
            if email != nil || name != nil {
                throw .badRequest("end_user_id is required when end_user_email or end_user_name is given.")
            }
            return nil
        }
        guard isValidID(id) else {
            throw .badRequest("end_user_id must be 1 to \(maximumIDLength) bytes of printable ASCII.")
        }
        if let email {
            guard (3...maximumEmailLength).contains(email.utf8.count), email.contains("@"), !hasControlCharacter(email) else {
                throw .badRequest("end_user_email must be 3 to \(maximumEmailLength) bytes holding an @ and no control characters.")
            }
        }
        if let name {
            guard (1...maximumNameLength).contains(name.utf8.count), !hasControlCharacter(name) else {
                throw .badRequest("end_user_name must be 1 to \(maximumNameLength) bytes without control characters.")
            }
        }
        return EndUser(id: id, email: email, name: name)
    }

    /// Whether `id` is 1–256 bytes, each printable ASCII (0x20–0x7E).
    public static func isValidID(_ id: String) -> Bool {
        (1...maximumIDLength).contains(id.utf8.count) && id.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// Whether `text` holds a C0 or C1 control character or DEL, which would let it forge lines in logs and pages.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

/// Printing an end user shows the id only: the email and name are personal data and stay out of logs.
extension EndUser: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `EndUser(id: …)`.
    public var description: String { "EndUser(id: \(id))" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// A mirror with the id only, so `dump` cannot print the email or name.
    public var customMirror: Mirror { Mirror(self, children: ["id": id], displayStyle: .struct) }
}
