import BrokerCore
import BrokerHTTP

/// Refuses what a route does not know: a misspelt filter must not widen an answer (`/accounts?end_user=42` listed
/// every account), and a misspelt field must not start a flow without what it meant to say.
enum StrictInput {
    /// `400 bad_request` naming the first query parameter that is none of `allowed`.
    static func query(_ request: Request, allowed: [StaticString]) throws(BrokerError) {
        guard let name = request.unknownQueryName(allowed: allowed) else { return }
        throw .badRequest("Unknown query parameter \(quoted(name)); this route takes \(list(allowed))")
    }

    /// ``query(_:allowed:)`` for a route that also takes per-account settings as `settings.NAME` parameters.
    static func query(_ request: Request, allowed: [StaticString], orSettings: Void) throws(BrokerError) {
        for item in request.queryItems where !SettingsParameters.isSetting(item.name) {
            guard !allowed.contains(where: { $0.description == item.name }) else { continue }
            throw .badRequest("Unknown query parameter \(quoted(item.name)); this route takes \(list(allowed)) and settings.NAME")
        }
    }

    /// `400 bad_request` naming the first member (or form field) that is none of `allowed`.
    static func fields(_ names: [String], allowed: [StaticString]) throws(BrokerError) {
        for name in names.sorted() where !allowed.contains(where: { $0.description == name }) {
            throw .badRequest("Unknown field \(quoted(name)); this route takes \(list(allowed))")
        }
    }

    /// The account is named one way: `id`, or `provider` with `uid`, never both.
    static func accountNaming(_ request: Request) throws(BrokerError) {
        // One pair (`id=…`, every read of GET /account) cannot conflict: nothing more to look up.
        guard let query = request.head.query, Self.hasAmpersand(query) else { return }
        if request.query("id") != nil, request.query("provider") != nil || request.query("uid") != nil {
            throw .badRequest("Name the account by id or by provider and uid, not both")
        }
    }

    /// Whether `text` holds a `&`, scanned in its contiguous UTF-8 (the generic `UTF8View` walk cost more than the rest of
    /// the check, on every read of GET /account).
    private static func hasAmpersand(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "&")) } ?? text.utf8.contains(UInt8(ascii: "&"))
    }

    private static func list(_ names: [StaticString]) -> String {
        names.isEmpty ? "none" : names.map(\.description).joined(separator: ", ")
    }

    /// A caller's name, quoted when short and printable, else a placeholder: it goes back in an error body and a log.
    private static func quoted(_ name: String) -> String {
        let plain = name.utf8.count <= 64 && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 }
        return plain ? "\"" + name + "\"" : "(a name that is not shown)"
    }
}
