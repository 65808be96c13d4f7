import BrokerCore
import BrokerHTTP

/// How a gateway caller (`/auth`, and the API proxy) names the account it acts for.
///
/// `Broker-Account: <id>`, or `Broker-Provider` with `Broker-End-User-ID` when that
/// pair names exactly one account. Where the query is the broker's own (`/auth`),
/// `id`, or `provider` with `end_user_id`, may stand in for the headers; a header
/// wins when both are given. The proxy passes its query on to the provider, so
/// there only the headers count.
enum AccountSelector: Equatable, Sendable {
    /// The account `provider:uid`.
    case id(String)
    /// The one account of this provider that belongs to this end user.
    case endUser(provider: String, endUserID: String)

    /// The account `request` names; `400 bad_request` when it names none, or names one badly.
    static func from(_ request: Request, readingQuery: Bool) throws(BrokerError) -> AccountSelector {
        func value(_ header: String, _ query: String) -> String? {
            if let given = request.headers[header] { return given }
            return readingQuery ? request.query(query) : nil
        }
        if let id = value("Broker-Account", "id") {
            guard AccountID(id) != nil else { throw .badRequest("Broker-Account must be an account id, PROVIDER:UID.") }
            return .id(id)
        }
        guard let provider = value("Broker-Provider", "provider"), !provider.isEmpty,
            let endUserID = value("Broker-End-User-ID", "end_user_id")
        else {
            throw .badRequest("Name the account with Broker-Account: PROVIDER:UID, or with Broker-Provider and Broker-End-User-ID.")
        }
        guard EndUser.isValidID(endUserID) else {
            throw .badRequest("Broker-End-User-ID must be 1 to \(EndUser.maximumIDLength) bytes of printable ASCII.")
        }
        return .endUser(provider: provider, endUserID: endUserID)
    }

    /// The id of the one account this names: `404 not_found` when there is none, `409 ambiguous_account` when an end
    /// user has several of that provider. An id is returned as given; the read that follows finds whether it exists.
    func resolve(in accounts: AccountService) async throws(BrokerError) -> String {
        switch self {
        case .id(let id):
            return id
        case .endUser(let provider, let endUserID):
            let page = try await accounts.page(
                after: nil, limit: 2, filter: AccountFilter(provider: provider, endUserID: endUserID), status: nil)
            guard let first = page.accounts.first else { throw .notFound }
            guard page.accounts.count == 1 else { throw .ambiguousAccount(provider: provider) }
            return first.id
        }
    }
}
