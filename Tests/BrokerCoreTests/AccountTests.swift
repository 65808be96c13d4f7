import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// Account identity and token expiry.
struct AccountTests {
    @Test func idIsProviderColonUID() {
        #expect(Account.make(provider: "spotify", uid: "abc:def").id == "spotify:abc:def")
        #expect(AccountID(provider: "github", uid: "7").string == "github:7")
    }

    @Test func expiryIsIssueTimePlusExpiresIn() {
        let issued = Date.fixture.addingTimeInterval(12.5)
        #expect(Account.expiry(issuedAt: issued, expiresIn: 3600) == issued.addingTimeInterval(3600))
        #expect(Account.expiry(issuedAt: issued, expiresIn: 0) == issued)
        #expect(Account.expiry(issuedAt: issued, expiresIn: nil) == nil)
        #expect(Account.expiry(issuedAt: issued, expiresIn: -30) == issued)
    }

    @Test func isExpiredFromTheExpiryInstantOn() {
        var account = Account.make()
        account.expiresAt = Account.expiry(issuedAt: .fixture, expiresIn: 60)
        #expect(!account.isExpired(at: Date.fixture.addingTimeInterval(59)))
        #expect(!account.isExpired(at: Date.fixture.addingTimeInterval(59.999)))
        #expect(account.isExpired(at: Date.fixture.addingTimeInterval(60)))
        #expect(account.isExpired(at: Date.fixture.addingTimeInterval(61)))
        account.expiresAt = nil
        #expect(!account.isExpired(at: .distantFuture))
    }
}
