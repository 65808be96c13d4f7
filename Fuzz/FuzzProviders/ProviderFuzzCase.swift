#if FUZZING
import Dispatch
import FuzzSupport
@testable import BrokerCore

/// One fuzz input played as a provider's answer to one step of a real client, with the broker's invariants checked.
///
/// Byte 0 picks the step, byte 1 the status, Content-Type and `Retry-After`
/// (see ``ProviderAnswer``), the rest is the body. The client under test is the
/// real one; only the network is replaced, by ``FixedAnswerUpstream``. Whatever
/// the answer, the step must end in a value or a ``BrokerError`` without
/// trapping. A value must make an account the store can write and read back
/// intact (``checkStored(_:)``); a refusal must be short and repeat none of the
/// secrets the request carried (``checkRefusal(_:secrets:)``).
struct ProviderFuzzCase {
    /// The client call an input plays against.
    enum Step: UInt8, CaseIterable {
        /// OAuth 2.0 code exchange with Weibo (the uid may come in the token answer), then the user endpoint if it does not.
        case exchange
        /// OAuth 2.0 user endpoint of GitHub.
        case userInfo
        /// OAuth 2.0 refresh grant with Google, and the `Retry-After` of a failed one.
        case refresh
        /// OAuth 1.0a temporary credentials from Twitter.
        case requestToken
        /// OAuth 1.0a token credentials from Twitter, then the user endpoint if the answer names no user.
        case accessToken
        /// TMDB request token.
        case tmdbRequestToken
        /// TMDB session, then the account it belongs to.
        case tmdbSession
        /// TMDB account.
        case tmdbAccount
        /// OAuth 2.0 code exchange with Slack: tokens under `authed_user`, a user id joined from two paths.
        case catalogueExchange
        /// OAuth 2.0 user endpoint of HubSpot: RFC 7662 introspection, a user id joined from two paths.
        case catalogueUserInfo
        /// An OpenID Connect ID token from the token endpoint, its claims checked as at sign-in.
        case idToken
    }

    /// The step this input runs.
    let step: Step
    /// The answer the fake provider gives.
    let answer: ProviderAnswer

    /// Splits raw fuzz bytes; short inputs get parameter 0 and an empty body.
    init(_ bytes: [UInt8]) {
        step = Step(rawValue: (bytes.first ?? 0) % UInt8(Step.allCases.count)) ?? .exchange
        answer = ProviderAnswer(parameter: bytes.count > 1 ? bytes[1] : 0, payload: bytes.count > 2 ? Array(bytes[2...]) : [])
    }

    /// The raw input for `step`, `parameter` and `payload` (what the seed writer stores).
    static func encode(_ step: Step, parameter: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [step.rawValue, parameter] + payload
    }

    /// The fake provider.
    var upstream: FixedAnswerUpstream { FixedAnswerUpstream(response: answer.response) }

    /// Runs the step; stops the process on a broken invariant.
    func check() {
        switch step {
        case .exchange: checkExchange()
        case .userInfo: checkUserInfo()
        case .refresh: checkRefresh()
        case .requestToken: checkRequestToken()
        case .accessToken: checkAccessToken()
        case .tmdbRequestToken: checkTMDBRequestToken()
        case .tmdbSession: checkTMDBSession()
        case .tmdbAccount: checkTMDBAccount()
        case .catalogueExchange: checkCatalogueExchange()
        case .catalogueUserInfo: checkCatalogueUserInfo()
        case .idToken: checkIDToken()
        }
    }

    /// A refusal is a sentence of at most 300 bytes that repeats none of `secrets`, unless the answer itself spelled one out.
    func checkRefusal(_ error: BrokerError, secrets: [String]) {
        let text = "\(error.code) \(error.message) \(error)"
        for secret in secrets where text.contains(secret) && !answer.payloadText.contains(secret) {
            fatalError("fuzz invariant broken: a \(step) refusal repeats a secret the request carried")
        }
        require(error.message.utf8.count <= 300, "a \(step) refusal of \(error.message.utf8.count) bytes")
    }
}

/// Runs an async client call to completion from the libFuzzer thread.
///
/// libFuzzer calls in on its own thread, which is not one of Swift concurrency's,
/// so blocking it on a semaphore while the call runs on the global executor
/// cannot starve the call.
enum Blocking {
    /// Where the task leaves its result for the waiting thread; the semaphore orders the write before the read.
    private final class Outcome<T, E: Error>: @unchecked Sendable {
        var result: Result<T, E>?
    }

    /// The result of `body`, run on a task while this thread waits.
    static func run<T, E: Error>(_ body: @escaping @Sendable () async throws(E) -> T) -> Result<T, E> {
        let outcome = Outcome<T, E>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do throws(E) {
                outcome.result = .success(try await body())
            } catch {
                outcome.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        guard let result = outcome.result else { fatalError("FuzzProviders: a client call ended without a result") }
        return result
    }
}
#endif
