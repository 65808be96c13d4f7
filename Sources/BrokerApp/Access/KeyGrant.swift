import BrokerCore
import Foundation

/// What an API key may do: one of the scopes `BROKER_API_KEY_SCOPES` names per route family.
public enum APIKeyScope: String, Sendable, CaseIterable, Comparable {
    /// Tokens handed out: `GET /account`, `POST /account/refresh`, `/auth`, `GET /app-token`.
    case tokensRead = "tokens:read"
    /// Accounts and flows without secrets: `GET /accounts`, `GET /flows/{state}`.
    case accountsRead = "accounts:read"
    /// Accounts removed: `DELETE /account`.
    case accountsWrite = "accounts:write"
    /// Provider APIs called with an account's credential: `/proxy/…`.
    case proxy
    /// Sign-ins started for end users: `POST /authorize`, `POST /connect/sessions`.
    case connect
    /// The store's operation: `/webhooks`, `/webhooks/replay`, `POST /backup`.
    case admin

    /// This scope's bit in ``KeyGrant``'s mask of the scopes held.
    var bit: UInt64 {
        switch self {
        case .tokensRead: 1 << 0
        case .accountsRead: 1 << 1
        case .accountsWrite: 1 << 2
        case .proxy: 1 << 3
        case .connect: 1 << 4
        case .admin: 1 << 5
        }
    }

    public static func < (a: APIKeyScope, b: APIKeyScope) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// The scopes an API key holds and the accounts it is limited to; a key nobody scoped holds everything.
public struct KeyGrant: Sendable, Equatable {
    /// The scopes held.
    public var scopes: Set<APIKeyScope> { didSet { held = Self.bits(scopes) } }
    /// ``scopes`` as one bit per scope (its place in `allCases`): the check on every request tests a bit rather
    /// than hashing the scope's name into the set.
    private var held: UInt64
    /// The providers whose accounts the key may touch; nil for any.
    public var providers: [String]?
    /// The prefix every end user id of the accounts the key touches must have; nil for any account.
    public var endUserPrefix: String?

    /// Every scope, every account: a key `BROKER_API_KEY_SCOPES` does not name.
    public static let all = KeyGrant(scopes: Set(APIKeyScope.allCases))

    public init(scopes: Set<APIKeyScope>, providers: [String]? = nil, endUserPrefix: String? = nil) {
        self.scopes = scopes
        self.providers = providers
        self.endUserPrefix = endUserPrefix
        held = Self.bits(scopes)
    }

    /// One bit per scope held.
    private static func bits(_ scopes: Set<APIKeyScope>) -> UInt64 {
        scopes.reduce(0) { $0 | $1.bit }
    }

    /// Whether the key holds every scope and no limit.
    public var isUnrestricted: Bool { self == .all }

    /// Refuses a key without `scope`.
    func require(_ scope: APIKeyScope) throws(BrokerError) {
        guard held & scope.bit != 0 else {
            throw .insufficientPermissions("This API key lacks the scope \(scope.rawValue).")
        }
    }

    /// Refuses a provider outside the key's providers.
    func require(provider: String) throws(BrokerError) {
        guard let providers, !providers.contains(provider) else { return }
        throw .insufficientPermissions("This API key is limited to the providers \(providers.joined(separator: ", ")).")
    }

    /// Refuses an end user (or none) outside the key's prefix.
    func require(endUser id: String?) throws(BrokerError) {
        guard let endUserPrefix, !(id?.hasPrefix(endUserPrefix) ?? false) else { return }
        throw .insufficientPermissions("This API key is limited to end users whose id starts with \"\(endUserPrefix)\".")
    }

    /// Refuses an account outside the key's limits.
    func require(account: Account) throws(BrokerError) {
        try require(provider: account.provider)
        try require(endUser: account.endUser?.id)
    }

    /// ``require(account:)`` of an account as the store holds it.
    func require(account held: HeldAccount) throws(BrokerError) {
        try require(provider: held.provider)
        try require(endUser: held.endUserID)
    }

    /// Parses `BROKER_API_KEY_SCOPES`: `name=scope scope …;name2=…`, each scope one of ``APIKeyScope``, `all`,
    /// `provider:NAME` (repeatable) or `end_user:PREFIX*`. Keys not named keep every scope.
    static func parse(_ text: String?, keys: [String], variable: String) throws(ConfigurationError) -> [String: KeyGrant] {
        guard let text, !text.trimmingCharacters(in: .whitespaces).isEmpty else { return [:] }
        var grants: [String: KeyGrant] = [:]
        for (index, item) in text.split(separator: ";", omittingEmptySubsequences: false).enumerated() {
            let entry = item.trimmingCharacters(in: .whitespaces)
            guard let equals = entry.firstIndex(of: "=") else {
                throw ConfigurationError(variable: variable, message: "entry \(index + 1) must be name=scope scope …")
            }
            let name = entry[..<equals].trimmingCharacters(in: .whitespaces)
            guard keys.contains(name) else {
                throw ConfigurationError(variable: variable, message: "entry \(index + 1) names \(name), which is not a key's name")
            }
            guard grants[name] == nil else {
                throw ConfigurationError(variable: variable, message: "the key named \(name) is scoped more than once")
            }
            var grant = KeyGrant(scopes: [])
            for word in entry[entry.index(after: equals)...].split(separator: " ").map(String.init) {
                if word == "all" {
                    grant.scopes = Set(APIKeyScope.allCases)
                } else if let scope = APIKeyScope(rawValue: word) {
                    grant.scopes.insert(scope)
                } else if word.hasPrefix("provider:"), word.count > "provider:".count {
                    grant.providers = (grant.providers ?? []) + [String(word.dropFirst("provider:".count))]
                } else if word.hasPrefix("end_user:"), word.hasSuffix("*"), word.count > "end_user:*".count, grant.endUserPrefix == nil {
                    grant.endUserPrefix = String(word.dropFirst("end_user:".count).dropLast())
                } else {
                    let known = APIKeyScope.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigurationError(
                        variable: variable,
                        message: "the key named \(name) has \"\(word)\", which is none of \(known), all, provider:NAME, end_user:PREFIX*")
                }
            }
            guard !grant.scopes.isEmpty else {
                throw ConfigurationError(variable: variable, message: "the key named \(name) is given no scope")
            }
            grants[name] = grant
        }
        return grants
    }

    /// `tokens:read accounts:read provider:github end_user:t1-*`, as `config check` prints it.
    public var description: String {
        var words = scopes.sorted().map(\.rawValue)
        if scopes.count == APIKeyScope.allCases.count { words = ["all"] }
        words += (providers ?? []).map { "provider:" + $0 }
        if let endUserPrefix { words.append("end_user:" + endUserPrefix + "*") }
        return words.joined(separator: " ")
    }
}
