/// Where a value sits in a provider's JSON answer: member names joined with `.`, a run of digits indexing an array.
///
/// `authed_user.id` (Slack), `athlete.id` (Strava), `data.viewer.id` (Linear's
/// GraphQL answer), `id`. A member whose own name holds a `.` cannot be
/// reached, and none of the providers the broker knows has one. A path is
/// checked where it enters (``problem(with:)``), so one that reaches the
/// exchanges only ever fails to find its value.
public struct ProviderJSONPath: Sendable, Equatable, CustomStringConvertible {
    /// The member names and array indexes, in order.
    public let segments: [String]

    /// The path written as `text`; see ``problem(with:)`` for what makes one usable.
    public init(_ text: String) {
        segments = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    /// The path as written.
    public var description: String { segments.joined(separator: ".") }

    /// The most segments a path may have.
    static let maximumSegments = 8

    /// Why `text` is no usable path, as a phrase for an error message, or nil when it is one.
    ///
    /// 1–8 segments of 1–64 letters, digits, `_` and `-`, joined with `.`.
    public static func problem(with text: String) -> String? {
        let path = ProviderJSONPath(text)
        guard !text.isEmpty, path.segments.count <= maximumSegments else {
            return "must be a JSON path of 1 to \(maximumSegments) names joined with '.'"
        }
        let plain = path.segments.allSatisfy { segment in
            !segment.isEmpty && segment.utf8.count <= 64
                && segment.unicodeScalars.allSatisfy {
                    $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-")
                }
        }
        return plain ? nil : "must be a JSON path of names of letters, digits, '_' and '-', joined with '.'"
    }

    /// The value at this path in `root` (a parsed JSON object), or nil when any step is missing or JSON null.
    ///
    /// A segment of digits indexes an array; on an object it is a member name like any other.
    func value(in root: Any) -> Any? {
        var current: Any = root
        for segment in segments {
            if let object = current as? [String: Any] {
                guard let next = object[segment] else { return nil }
                current = next
            } else if let array = current as? [Any], let index = Int(segment), segment.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                array.indices.contains(index)
            {
                current = array[index]
            } else {
                return nil
            }
        }
        return ProviderValue.isNull(current) ? nil : current
    }
}

extension ProviderJSONPath {
    /// The user id that `paths` name together in `root`, their values joined with `:`; nil when any is missing or no exact id.
    ///
    /// Each value must be a string or a JSON integer as written
    /// (``ProviderValue/exactIdentifier(_:)``): never a fraction, exponent or
    /// boolean, so two answers that differ in their bytes never name one user.
    /// Of several values none may hold a `:`, so the joined id reads back one way
    /// only (Slack's `team.id` and `authed_user.id` make `T1:U1`).
    public static func userID(at paths: [ProviderJSONPath], in root: Any) -> String? {
        var parts: [String] = []
        for path in paths {
            guard let part = path.value(in: root).flatMap(ProviderValue.exactIdentifier) else { return nil }
            if paths.count > 1, part.utf8.contains(UInt8(ascii: ":")) { return nil }
            parts.append(part)
        }
        return parts.isEmpty ? nil : parts.joined(separator: ":")
    }
}
