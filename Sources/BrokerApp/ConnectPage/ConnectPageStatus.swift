import BrokerCore
import Foundation

/// How an account's state reads on the connect page: a badge and a label, decided with the injected clock.
///
/// Labels: `active` (no expiry known), `expires in 3 h` / `expires in 12 min` /
/// `expires in 40 days`, `expired`, `reauthorization required`, and `refresh failing` (with the
/// reauthorization badge: the broker stopped refreshing the account, and connecting again is the fix).
struct ConnectPageStatus: Equatable {
    /// The badge: whether the account can be used now.
    enum State: String, Equatable {
        /// The token is usable.
        case active
        /// The token's lifetime has passed; connecting again replaces it.
        case expired
        /// The provider no longer honours the grant; the user must connect again.
        case reauthorizationRequired = "reauthorization required"
    }

    /// The badge.
    let state: State
    /// The words shown next to the account.
    let label: String

    /// The label of an account whose refresh the broker gave up on.
    static let refreshFailingLabel = "refresh failing"

    /// The status of a stored account at `now`.
    static func make(status: AccountStatus, expiresAt: Date?, now: Date) -> ConnectPageStatus {
        switch status {
        case .reauthorizationRequired:
            return ConnectPageStatus(state: .reauthorizationRequired, label: State.reauthorizationRequired.rawValue)
        case .refreshExhausted:
            return ConnectPageStatus(state: .reauthorizationRequired, label: Self.refreshFailingLabel)
        case .invalid:
            return ConnectPageStatus(state: .reauthorizationRequired, label: "credential refused")
        case .active:
            guard let expiresAt else { return ConnectPageStatus(state: .active, label: "active") }
            let remaining = expiresAt.timeIntervalSince(now)
            // Same rule as Account.isExpired: a token whose expiry is now is expired.
            guard remaining > 0 else { return ConnectPageStatus(state: .expired, label: "expired") }
            return ConnectPageStatus(state: .active, label: "expires in " + duration(remaining))
        }
    }

    /// The status of an account the core refused to hand out, from the refusal.
    static func make(refusal: BrokerError) -> ConnectPageStatus? {
        switch refusal {
        case .expired: return ConnectPageStatus(state: .expired, label: "expired")
        case .reauthorizationRequired:
            return ConnectPageStatus(state: .reauthorizationRequired, label: State.reauthorizationRequired.rawValue)
        case .refreshExhausted: return ConnectPageStatus(state: .reauthorizationRequired, label: Self.refreshFailingLabel)
        default: return nil
        }
    }

    /// A positive number of seconds in the largest unit that reads well, rounded to the nearest: `12 min`, `3 h`, `40 days`.
    static func duration(_ seconds: TimeInterval) -> String {
        let minutes = max(1, Int((seconds / 60).rounded()))
        if minutes < 60 { return "\(minutes) min" }
        let hours = Int((seconds / 3600).rounded())
        if hours < 48 { return "\(hours) h" }
        return "\(Int((seconds / 86_400).rounded())) days"
    }
}
