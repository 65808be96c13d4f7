import Foundation

/// What an `api_key`, `basic` or `bearer` provider asks people for, and where its API calls carry it.
///
/// The providers file declares it with `fields`, `credential_header` / `credential_format` or `credential_query_param`,
/// and `verify`; each kind has defaults (``defaults(for:)``), so `{"auth": "api_key", "api_base_url": …}` is enough.
public struct CredentialScheme: Sendable, Equatable {
    /// One value a person enters: its name (the member of `POST /accounts`' `credentials`) and how it is checked.
    public struct Field: Sendable, Equatable {
        /// The member name, for example `api_key`, `username`.
        public var name: String
        /// A sentence shown to people (the hosted form) and in `/providers`.
        public var description: String
        /// A regular expression the whole value must match, or nil.
        public var pattern: String?
        /// The most UTF-8 bytes the value may have (at most ``CredentialScheme/maximumValueBytes``).
        public var maxLength: Int

        /// Whether the value is a secret, shown masked on the hosted form and never put back in it, nor used as the
        /// account's uid. By default every field but a user name and an identifier (`username`, `…_id`, `…_sid`),
        /// which people recognise and need to see to correct; a preset may say otherwise (Freshdesk's user name is
        /// the API key).
        public var isSecret: Bool

        /// Creates a field; the length cap defaults to the broker's, and `secret` to the rule of ``isSecret``.
        public init(
            name: String, description: String, pattern: String? = nil, maxLength: Int = CredentialScheme.maximumValueBytes,
            secret: Bool? = nil
        ) {
            self.name = name
            self.description = description
            self.pattern = pattern
            self.maxLength = maxLength
            self.isSecret = secret ?? !(name == "username" || name.hasSuffix("_id") || name.hasSuffix("_sid"))
        }

        /// Whether the pattern admits one value only (a literal such as Mailgun's user name `api`): such a field tells
        /// one account from another no more than a constant does.
        public var isFixed: Bool {
            guard let pattern, !pattern.isEmpty else { return false }
            return pattern.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
                    || byte == 0x2D
            }
        }
    }

    /// Where the proxy (and verification) puts the credential on a call.
    public enum Placement: Sendable, Equatable {
        /// A header field whose value is `format` with each `{field}` replaced by that field's value
        /// (`Authorization: Bearer {token}`, `Authorization: Token {api_key}`, `X-Api-Key: {api_key}`).
        case header(name: String, format: String)
        /// `name=<format with each {field} replaced>` appended to the query (RFC 3986 §3.4); `format` is usually
        /// one placeholder, `{api_key}`.
        case query(name: String, format: String)
        /// `Authorization: Basic base64(username:password)` (RFC 7617 §2).
        case basic
    }

    /// The request that tells a good credential from a bad one, sent to the provider's `api_base_url`.
    public struct Verification: Sendable, Equatable {
        /// The HTTP method, `GET` by default.
        public var method: String
        /// The path under the API base, starting with `/`, optionally with a query.
        public var path: String
        /// The statuses that mean the credential is valid; `[200]` by default.
        public var validStatuses: [Int]
        /// The JSON path in the answer that names the user, which then becomes the account's uid; nil for none.
        public var userIDField: ProviderJSONPath?

        /// Creates a verification request.
        public init(method: String = "GET", path: String, validStatuses: [Int] = [200], userIDField: ProviderJSONPath? = nil) {
            self.method = method
            self.path = path
            self.validStatuses = validStatuses
            self.userIDField = userIDField
        }
    }

    /// A further header field a call carries beside ``placement``, its value `format` with each `{field}` filled in:
    /// for the APIs that take two keys in two fields (Datadog's `DD-API-KEY` and `DD-APPLICATION-KEY`).
    public struct HeaderField: Sendable, Equatable {
        /// The field's name (an HTTP token the broker and transport do not write themselves).
        public var name: String
        /// Its value, with `{field}` placeholders.
        public var format: String

        /// Creates a further header field.
        public init(name: String, format: String) {
            self.name = name
            self.format = format
        }
    }

    /// The fields, in the order people fill them in.
    public var fields: [Field]
    /// Where calls carry the credential.
    public var placement: Placement
    /// Further header fields every call carries (`credential_extra_headers`); none by default.
    public var additionalHeaders: [HeaderField] = []
    /// The verification request, or nil when the provider declares none (the credential is stored unchecked).
    public var verification: Verification?

    /// Creates a scheme.
    public init(fields: [Field], placement: Placement, verification: Verification? = nil) {
        self.fields = fields
        self.placement = placement
        self.verification = verification
    }

    /// The most UTF-8 bytes of one entered value: room for any real key, JWT or password, and no more.
    public static let maximumValueBytes = 4096

    /// The scheme of a kind when the providers file says nothing more: `api_key` → one field `api_key` sent as
    /// `Authorization: Bearer {api_key}`; `bearer` → one field `token` sent as `Authorization: Bearer {token}`;
    /// `basic` → `username` and `password` sent as HTTP Basic. Nil for the kinds that sign in.
    public static func defaults(for kind: ProviderKind) -> CredentialScheme? {
        switch kind {
        case .apiKey:
            CredentialScheme(
                fields: [Field(name: "api_key", description: "The API key")],
                placement: .header(name: "Authorization", format: "Bearer {api_key}"))
        case .bearer:
            CredentialScheme(
                fields: [Field(name: "token", description: "The access token")],
                placement: .header(name: "Authorization", format: "Bearer {token}"))
        case .basic:
            CredentialScheme(
                fields: [Field(name: "username", description: "The user name"), Field(name: "password", description: "The password")],
                placement: .basic)
        case .oauth2, .oidc, .oauth1, .tmdb, .mcp:
            nil
        }
    }

    /// `format` with each `{field}` replaced by that field's value from `values` (absent fields by nothing).
    public static func render(_ format: String, _ values: CredentialValues) -> String {
        var out = ""
        var rest = Substring(format)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            out += values[String(rest[rest.index(after: open)..<close])] ?? ""
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    /// The field names a placement's format or parameter refers to, in order of appearance.
    static func placeholders(in format: String) -> [String] {
        var names: [String] = []
        var rest = Substring(format)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else { break }
            names.append(String(rest[rest.index(after: open)..<close]))
            rest = rest[rest.index(after: close)...]
        }
        return names
    }

    /// The entered `values` checked against the fields: every field present, no other name, each value within its
    /// length, free of control characters and matching its pattern. The error is a sentence naming the field, never a
    /// value.
    public func check(_ values: [String: String]) -> Result<CredentialValues, CredentialInputError> {
        for name in values.keys.sorted() where !fields.contains(where: { $0.name == name }) {
            return .failure(.unknownField(name, expected: fields.map(\.name)))
        }
        var checked: [(String, Secret)] = []
        for field in fields {
            guard let value = values[field.name], !value.isEmpty else { return .failure(.missingField(field.name)) }
            guard value.utf8.count <= field.maxLength else {
                return .failure(.invalidValue(field.name, "is longer than \(field.maxLength) bytes"))
            }
            // Unicode's Cc: C0 controls, DEL and C1 controls; none belongs in a key and each could split a header.
            guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
                return .failure(.invalidValue(field.name, "contains a control character"))
            }
            if case .basic = placement, field.name == "username", value.contains(":") {
                // RFC 7617 §2: the user-id cannot contain a colon.
                return .failure(.invalidValue(field.name, "contains a colon, which HTTP Basic cannot carry in a user name"))
            }
            if let pattern = field.pattern, !Self.matches(value, pattern: pattern) {
                return .failure(.invalidValue(field.name, "does not have the form the provider expects"))
            }
            checked.append((field.name, Secret(value)))
        }
        return .success(CredentialValues(checked))
    }

    /// Whether all of `value` matches the regular expression `pattern` (checked to compile when the file is read).
    static func matches(_ value: String, pattern: String) -> Bool {
        guard let expression = try? NSRegularExpression(pattern: "^(?:" + pattern + ")$") else { return false }
        let range = NSRange(value.startIndex..., in: value)
        return expression.firstMatch(in: value, options: [], range: range) != nil
    }
}

/// Why entered credentials were refused; each names the field, never a value.
public enum CredentialInputError: Error, Sendable, Equatable {
    /// A member the provider does not declare.
    case unknownField(String, expected: [String])
    /// A declared field absent or empty.
    case missingField(String)
    /// A value too long, with a control character, or not matching the field's pattern.
    case invalidValue(String, String)

    /// A sentence for the error body.
    public var message: String {
        switch self {
        case .unknownField(let name, let expected):
            "Unknown credential field \(Self.quoted(name)); this provider takes \(expected.joined(separator: ", "))"
        case .missingField(let name):
            "The credential field \"\(name)\" is required"
        case .invalidValue(let name, let problem):
            "The credential field \"\(name)\" \(problem)"
        }
    }

    /// A caller's name quoted when short and printable, else a placeholder: it goes back in an error body and a log.
    private static func quoted(_ name: String) -> String {
        let plain = name.utf8.count <= 64 && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 }
        return plain ? "\"" + name + "\"" : "(a name that is not shown)"
    }
}
