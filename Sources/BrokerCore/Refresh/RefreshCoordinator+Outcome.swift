import Foundation

extension RefreshCoordinator {
    /// What a refresh request came to, short of an error.
    public enum Outcome: Sendable, Equatable {
        /// A new token was issued, here or by another replica, or the account was re-authorized meanwhile; the account as stored now.
        case refreshed(Account)
        /// Nothing was done: the account is not due or cannot be refreshed; the account as last read.
        case unchanged(Account)
        /// Nothing was done because the account backs off after transient failures: the account as last read, the last try's error, and when the next try may start.
        case backingOff(Account, lastError: BrokerError, until: Date)
        /// The provider call failed transiently (timeout, 5xx, transport, other refusal); the account as stored, its tokens untouched.
        case failed(Account, BrokerError)

        /// The account this outcome carries.
        public var account: Account {
            switch self {
            case .refreshed(let account), .unchanged(let account), .failed(let account, _), .backingOff(let account, _, _): account
            }
        }
    }

    /// One provider refresh call's result, for logs and metrics; it never holds a token.
    public struct Event: Sendable, Equatable {
        /// Why a refresh failed, as the metrics label it.
        public enum FailureReason: String, Sendable, CaseIterable {
            /// The refresh token is dead; the account now needs re-authorization.
            case invalidGrant = "invalid_grant"
            /// A timeout, 5xx, transport error or other refusal; the current token is kept and the call retried later.
            case transient
        }

        /// What the call came to.
        public enum Result: Sendable, Equatable {
            /// The provider issued a new access token.
            case refreshed
            /// The provider refused or did not answer; `message` is safe to log.
            case failed(FailureReason, message: String)
        }

        /// Something about a successful refresh an operator should hear of; never a value from the answer.
        public enum Warning: Sendable, Equatable {
            /// The new access token expires no later than the one it replaced: the refresh gained nothing, and
            /// the token stays due. Reported once per account per hour.
            case notLongerLived
            /// The answer's other fields were over ``TokenExtras/maximumBytes`` and were not kept.
            case extrasDropped
        }

        /// The provider called.
        public var provider: String
        /// The account refreshed.
        public var accountID: AccountID
        /// What happened.
        public var result: Result
        /// What an operator should hear of besides: only with ``Result/refreshed``.
        public var warnings: [Warning] = []

        /// Creates an event.
        public init(provider: String, accountID: AccountID, result: Result) {
            self.provider = provider
            self.accountID = accountID
            self.result = result
        }
    }
}
