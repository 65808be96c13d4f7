import BrokerCore
import BrokerCrypto
import BrokerHTTP
import Foundation

/// Reads the end user and tags of `POST /authorize` and the filters and paging of `GET /accounts`.
///
/// Every bad value is refused with `400 bad_request` naming the field, before anything is stored.
enum OwnerParameters {
    /// The fields only an API-key caller may give; `GET /authorize` refuses each by name.
    static let apiOnlyFields = ["end_user_id", "end_user_email", "end_user_name", "tags", "tag"]

    /// The first API-only field in the query of `GET /authorize`, refused: a browser cannot choose whom it belongs to.
    static func refuseInBrowserFlow(_ request: Request) throws(BrokerError) {
        for item in request.queryItems where apiOnlyFields.contains(item.name) {
            throw .badRequest(
                "\(item.name) is accepted only by POST /authorize with the API key; a browser cannot choose whom it belongs to.")
        }
    }

    /// The end user and tags of a `POST /authorize` form.
    static func owner(_ form: RequestForm) throws(BrokerError) -> (endUser: EndUser?, tags: [String: String]) {
        for field in ["end_user_id", "end_user_email", "end_user_name"] where form.nonStringFields.contains(field) {
            throw .badRequest("\(field) must be a string.")
        }
        let endUser = try EndUser.validated(id: form["end_user_id"], email: form["end_user_email"], name: form["end_user_name"])
        if form.tagsMalformed { throw .badRequest("tags must be an object whose values are strings.") }
        return (endUser, try tags(form.tagPairs, field: "tags"))
    }

    /// Checked `key:value` pairs; `field` names them in errors.
    static func tags(_ pairs: [(key: String, value: String?)], field: String) throws(BrokerError) -> [String: String] {
        var checked: [(key: String, value: String)] = []
        for pair in pairs {
            guard let value = pair.value else { throw .badRequest("\(field): each tag is key:value.") }
            checked.append((pair.key, value))
        }
        do { return try AccountTags.validated(checked) } catch {
            guard case .badRequest(let message) = error, field != "tags" else { throw error }
            throw .badRequest(field + message.dropFirst("tags".count))
        }
    }

    /// What `GET /accounts` asks for.
    struct Listing {
        var filter = AccountFilter()
        var status: String?
        /// The `cursor` as given, checked by ``ListingCursor`` once the caller is known.
        var cursor: String?
        var limit = OwnerParameters.defaultLimit
    }

    /// The page size without `limit`.
    static let defaultLimit = 100
    /// The largest `limit`.
    static let maximumLimit = 1000

    /// The filters and paging of a `GET /accounts` query.
    static func listing(_ request: Request) throws(BrokerError) -> Listing {
        var listing = Listing()
        if let provider = request.query("provider"), !provider.isEmpty { listing.filter.provider = provider }
        if let id = request.query("end_user_id") {
            guard EndUser.isValidID(id) else {
                throw .badRequest("end_user_id must be 1 to \(EndUser.maximumIDLength) bytes of printable ASCII.")
            }
            listing.filter.endUserID = id
        }
        if let status = request.query("status") {
            guard AccountService.reportedStatuses.contains(status) else {
                throw .badRequest("status must be active, expired, reauthorization_required, refresh_exhausted or invalid.")
            }
            listing.status = status
        }
        let pairs = request.queryItems.filter { $0.name == "tag" }.map { item -> (key: String, value: String?) in
            guard let colon = item.value.firstIndex(of: ":") else { return (item.value, nil) }
            return (String(item.value[..<colon]), String(item.value[item.value.index(after: colon)...]))
        }
        listing.filter.tags = try tags(pairs, field: "tag")
        if let text = request.query("limit") {
            guard let limit = decimal(text), (1...maximumLimit).contains(limit) else {
                throw .badRequest("limit must be an integer from 1 to \(maximumLimit).")
            }
            listing.limit = limit
        }
        listing.cursor = request.query("cursor")
        return listing
    }

    /// The number `text` spells in plain decimal digits, without sign or leading zero (`+5`, `05` and ` 5` are not
    /// numbers here); nil otherwise, or past four digits.
    static func decimal(_ text: String) -> Int? {
        let digits = text.utf8
        guard (1...4).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.first != 0x30 || digits.count == 1
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}
