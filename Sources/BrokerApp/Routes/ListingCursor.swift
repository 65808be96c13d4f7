import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// The `cursor` of `GET /accounts` (and of `GET /webhooks`): where the next page starts, signed and bound to the
/// listing it came from.
///
/// A cursor is `<id>.<tag>`, both base64url without padding: the id of the last account of the page, and the first
/// 16 bytes of an HMAC-SHA256 (RFC 2104) over the id and the listing's filters and caller kind, under a key derived
/// from `BROKER_SECRET` (shared by every replica). So a cursor this broker did not give, or one given for other
/// filters, is `400`; a cursor of any replica works on every other. Cursors do not expire: they name an id, not a
/// position, so an old one still continues after that id.
struct ListingCursor: Sendable {
    private let key: [UInt8]
    /// The bytes of the tag kept in a cursor (128 bits).
    private static let tagByteCount = 16

    /// Cursors keyed by `secret` (the broker's cookie secret), through a key of their own.
    init(secret: [UInt8]) {
        key = HMAC.sha256(key: secret, message: Array("token-broker GET /accounts cursor v1".utf8))
    }

    /// What a cursor is bound to: the listing's filters and whether a browser session or an API key asked.
    ///
    /// Each part is a JSON string, so no value can spell another's boundary; tags are sorted by key.
    static func scope(_ listing: OwnerParameters.Listing, session: Bool) -> String {
        let filter = listing.filter
        var parts = [
            session ? "session" : "api", filter.provider ?? "", filter.endUserID ?? "", listing.status ?? "",
        ]
        for key in filter.tags.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            parts.append(key)
            parts.append(filter.tags[key] ?? "")
        }
        return parts.map { JSONString.quote($0) }.joined(separator: ",")
    }

    /// The cursor for the page after `id` (an account id, or another listing's position) of a listing of `scope`.
    func cursor(after id: String, scope: String) -> String {
        Base64URL.encode(Array(id.utf8)) + "." + Base64URL.encode(tag(id: id, scope: scope))
    }

    /// The id `cursor` continues after, or nil when this broker did not give it for a listing of `scope`.
    func after(_ cursor: String, scope: String) -> String? {
        let parts = cursor.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let idBytes = Base64URL.decode(String(parts[0])), let presented = Base64URL.decode(String(parts[1])),
            presented.count == Self.tagByteCount, let id = String(validating: idBytes, as: UTF8.self)
        else { return nil }
        return ConstantTime.equals(presented, tag(id: id, scope: scope)) ? id : nil
    }

    private func tag(id: String, scope: String) -> [UInt8] {
        Array(HMAC.sha256(key: key, message: Array((scope + "\n" + id).utf8)).prefix(Self.tagByteCount))
    }
}
