#if FUZZING
import Foundation
import FuzzSupport
@testable import BrokerCore
@testable import BrokerFileStore

/// What a successful step leaves behind: an account record or a pending flow, each checked as the store would keep it.
extension ProviderFuzzCase {
    /// The account the service would store from `grant` for `uid` (as ``AuthorizationService`` builds it, no earlier record).
    func account(provider: String, uid: String, grant: TokenGrant, screenName: String?) -> Account {
        Account(
            provider: provider, uid: uid, accessToken: grant.accessToken, tokenType: grant.tokenType, scope: grant.scope,
            refreshToken: grant.refreshToken, tokenSecret: grant.tokenSecret, screenName: screenName ?? grant.screenName,
            expiresAt: Account.expiry(issuedAt: ProviderFixtures.now, expiresIn: grant.expiresIn),
            createdAt: ProviderFixtures.now, updatedAt: ProviderFixtures.now)
    }

    /// A lifetime within 0…``TokenGrant/maximumLifetime`` whose expiry the record format writes and reads back.
    func checkLifetime(_ expiresIn: Int?) {
        guard let expiresIn else { return }
        require((0...TokenGrant.maximumLifetime).contains(expiresIn), "expires_in \(expiresIn) outside 0...maximumLifetime")
        guard let expiry = Account.expiry(issuedAt: ProviderFixtures.now, expiresIn: expiresIn) else {
            fatalError("fuzz invariant broken: a lifetime without an expiry")
        }
        let text = RFC3339Date.format(expiry)
        let year = Int(text.prefix { $0 != "-" })
        require(year.map { $0 <= 9999 } == true, "an expiry formatted with year \(text.prefix { $0 != "-" })")
        require(RFC3339Date.parse(text) == expiry, "an expiry that does not read back from its RFC 3339 text")
    }

    /// The account's uid is one the broker accepts, its tokens are ones it can hand on, its file name is bounded
    /// and its own, and the record round-trips.
    func checkStored(_ account: Account) {
        require(ProviderUserID.problem(with: account.uid) == nil, "a stored uid that ProviderUserID refuses")
        for token in [account.accessToken, account.refreshToken, account.tokenSecret].compactMap({ $0?.value }) {
            // The rule OAuth2ResponseValidator.checkToken states for every token the broker hands on.
            require(
                !token.isEmpty && token.utf8.count <= OAuth2ResponseValidator.maximumTokenBytes,
                "a stored token of \(token.utf8.count) bytes")
            require(
                !token.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
                "a stored token with control characters")
        }
        let name = StoreFileName.forAccount(id: account.id)
        require(name.utf8.count <= StoreFileName.maximumLength, "an account file name of \(name.utf8.count) bytes")
        require(StoreFileName.isName(name, forAccount: account.id), "an account file name that is not the account's")
        let codec = PlainJSONAccountCodec()
        guard let bytes = try? codec.encode(account) else {
            fatalError("fuzz invariant broken: an account from a provider answer does not encode")
        }
        guard let again = try? codec.decode(bytes, path: "fuzz.json") else {
            fatalError("fuzz invariant broken: an account from a provider answer does not decode")
        }
        require(ExactKey.same(again.uid, account.uid) && ExactKey.same(again.provider, account.provider), "a round trip changed the uid")
        require(again.accessToken == account.accessToken, "a round trip changed the access token")
        require(again.refreshToken == account.refreshToken && again.tokenSecret == account.tokenSecret, "a round trip changed a token")
        require(again.expiresAt == account.expiresAt, "a round trip changed the expiry")
    }

    /// The pending flow the service would keep for a request token (and its secret) round-trips byte for byte.
    func checkStoredFlow(provider: String, requestToken: String, secret: Secret?) {
        let flow = PendingFlow(
            state: "fuzz-state-0123456789abcdef", provider: provider, binding: "api", requestToken: requestToken,
            requestTokenSecret: secret, createdAt: ProviderFixtures.now, expiresAt: ProviderFixtures.now.addingTimeInterval(600))
        guard let bytes = try? PendingFlowCodec.encode(flow), let again = try? PendingFlowCodec.decode(bytes, path: "flow.json") else {
            fatalError("fuzz invariant broken: a flow holding a provider's request token does not round-trip")
        }
        require(again.requestToken.map { ExactKey.same($0, requestToken) } == true, "a round trip changed the request token")
        require(again.requestTokenSecret == secret, "a round trip changed the request token secret")
    }
}
#endif
