/// Scope lists: how the broker reads a granted `scope` and checks the scopes a caller asks for.
///
/// RFC 6749 §3.3: `scope = scope-token *( SP scope-token )`, `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
/// Some providers (GitHub, Slack, Facebook) answer their granted scopes separated by commas, so a granted `scope`
/// is split at spaces and commas both; for the same reason a scope the broker is asked for may hold no comma.
public enum Scopes {
    /// The most scopes one request may name.
    public static let maximumCount = 64
    /// The longest scope token accepted, in bytes.
    public static let maximumBytes = 256

    /// The scope tokens of a granted `scope` (RFC 6749 §5.1), in order, each once; empty for an empty string.
    public static func parse(_ text: String) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for part in text.split(whereSeparator: { $0 == " " || $0 == "," }) where seen.insert(String(part)).inserted {
            out.append(String(part))
        }
        return out
    }

    /// Whether `scope` is one scope token the broker accepts: printable ASCII without space, `"`, `\` or `,`.
    public static func isToken(_ scope: String) -> Bool {
        !scope.isEmpty && scope.utf8.count <= maximumBytes
            && scope.utf8.allSatisfy { $0 != 0x2C && ($0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0)) }
    }

    /// `scopes` checked on entry (1…``maximumCount`` tokens, each ``isToken(_:)``) with repeats dropped, or a 400 naming `field`.
    public static func validated(_ scopes: [String], field: String = "scopes") throws(BrokerError) -> [String] {
        guard !scopes.isEmpty, scopes.count <= maximumCount, scopes.allSatisfy(isToken) else {
            throw .badRequest(
                "\(field) must be 1 to \(maximumCount) scope tokens of at most \(maximumBytes) bytes "
                    + "(RFC 6749 §3.3: printable ASCII, no space, quote, backslash or comma)")
        }
        return parse(scopes.joined(separator: " "))
    }

    /// A caller's list: one string of tokens separated by commas or spaces, checked as ``validated(_:field:)``.
    public static func validated(text: String, field: String = "scopes") throws(BrokerError) -> [String] {
        try validated(text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init), field: field)
    }

    /// The scopes of `asked` that `granted` lacks, in the order asked.
    public static func missing(_ asked: [String], from granted: [String]) -> [String] {
        let have = Set(granted)
        return asked.filter { !have.contains($0) }
    }

    /// `granted` followed by those of `asked` it lacks: what a step-up flow asks for.
    public static func union(_ granted: [String], _ asked: [String]) -> [String] {
        granted + missing(asked, from: granted)
    }
}

extension Account {
    /// The granted scopes, split from ``scope`` (``Scopes/parse(_:)``); nil when unknown (records of earlier
    /// versions, providers that said nothing and flows that asked for nothing).
    public var grantedScopes: [String]? { scope.map(Scopes.parse) }
}
