import BrokerCore
import Foundation
import Testing

@testable import BrokerApp

/// The status words next to each account, decided with an injected clock.
@Suite struct ConnectPageStatusTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static let timeLeft: [(seconds: Double, label: String)] = [
        (10_800, "expires in 3 h"), (10_780, "expires in 3 h"), (720, "expires in 12 min"), (30, "expires in 1 min"),
        (1, "expires in 1 min"), (3540, "expires in 59 min"), (3600, "expires in 1 h"), (169_200, "expires in 47 h"),
        (3_456_000, "expires in 40 days"), (157_679_999, "expires in 1825 days"),
    ]

    @Test(arguments: timeLeft)
    func aFutureExpiryReadsAsTimeLeft(seconds: Double, label: String) {
        let status = ConnectPageStatus.make(status: .active, expiresAt: Self.now.addingTimeInterval(seconds), now: Self.now)
        #expect(status == ConnectPageStatus(state: .active, label: label))
    }

    @Test(arguments: [0.0, -1.0, -86_400.0])
    func aPastOrPresentExpiryIsExpired(seconds: Double) {
        let status = ConnectPageStatus.make(status: .active, expiresAt: Self.now.addingTimeInterval(seconds), now: Self.now)
        #expect(status == ConnectPageStatus(state: .expired, label: "expired"))
    }

    @Test func noExpiryIsActive() {
        #expect(
            ConnectPageStatus.make(status: .active, expiresAt: nil, now: Self.now) == ConnectPageStatus(state: .active, label: "active"))
    }

    @Test func aRevokedGrantNeedsReauthorizationWhateverItsExpiry() {
        for expiry in [nil, Self.now.addingTimeInterval(3600), Self.now.addingTimeInterval(-3600)] {
            let status = ConnectPageStatus.make(status: .reauthorizationRequired, expiresAt: expiry, now: Self.now)
            #expect(status == ConnectPageStatus(state: .reauthorizationRequired, label: "reauthorization required"))
        }
    }

    @Test func theClockDecidesNotTheWallClock() {
        let expiry = Self.now.addingTimeInterval(3 * 3600)
        #expect(ConnectPageStatus.make(status: .active, expiresAt: expiry, now: Self.now).label == "expires in 3 h")
        #expect(
            ConnectPageStatus.make(status: .active, expiresAt: expiry, now: Self.now.addingTimeInterval(10_080)).label
                == "expires in 12 min")
        #expect(ConnectPageStatus.make(status: .active, expiresAt: expiry, now: expiry).label == "expired")
    }

    @Test func anAccountGivenUpOnReadsRefreshFailingWithTheReauthorizationBadge() {
        let expected = ConnectPageStatus(state: .reauthorizationRequired, label: "refresh failing")
        #expect(ConnectPageStatus.make(status: .refreshExhausted, expiresAt: Self.now.addingTimeInterval(-3600), now: Self.now) == expected)
        #expect(ConnectPageStatus.make(refusal: .refreshExhausted) == expected)
    }

    @Test func refusalsOfTheCoreMapToTheirStatus() {
        #expect(ConnectPageStatus.make(refusal: .expired) == ConnectPageStatus(state: .expired, label: "expired"))
        #expect(ConnectPageStatus.make(refusal: .reauthorizationRequired)?.state == .reauthorizationRequired)
        #expect(ConnectPageStatus.make(refusal: .notFound) == nil)
        #expect(ConnectPageStatus.make(refusal: .storageUnavailable("disk")) == nil)
    }
}
