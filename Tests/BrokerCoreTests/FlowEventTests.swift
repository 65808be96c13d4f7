import BrokerCore
import Foundation
import Synchronization
import Testing

/// What the core reports for metrics: every sign-in's outcome, and every provider call with its provider and step.
struct FlowEventTests {
    /// Keeps what was reported, in order.
    final class Recorder: ProviderCallObserver {
        let flows = Mutex<[FlowEvent]>([])
        let calls = Mutex<[(provider: String, step: ProviderStep, seconds: Double, error: BrokerError?)]>([])

        func providerCallFinished(provider: String, step: ProviderStep, seconds: Double, error: BrokerError?) {
            calls.withLock { $0.append((provider, step, seconds, error)) }
        }

        var events: [FlowEvent] { flows.withLock { $0 } }
        var steps: [String] { calls.withLock { $0.map { "\($0.provider) \($0.step.rawValue) \($0.error?.code ?? "ok")" } } }
    }

    @Test func signInsAreStartedCompletedFailedOrUnmatched() async throws {
        let recorder = Recorder()
        try await BrokerHarness.with(providerCalls: recorder, onFlow: { event in recorder.flows.withLock { $0.append(event) } }) { broker in
            // A name the registry does not know is never reported: it came from the request.
            #expect(await brokerError { try await broker.begin("no-such-provider") } == .unknownProvider("no-such-provider"))
            #expect(recorder.events.isEmpty)
            // A preset without credentials is known, so its refusal counts as a failed start.
            #expect(await brokerError { try await broker.begin("twitter") } != nil)
            #expect(
                recorder.events == [
                    .failed(
                        provider: "twitter",
                        error: .providerNotConfigured(
                            "twitter",
                            missing: ["TWITTER_CONSUMER_KEY", "TWITTER_CONSUMER_SECRET"]))
                ])

            let first = try await broker.begin("github")
            #expect(await brokerError { try await broker.callback(first, nonce: "another-browser") } == .invalidState)
            let second = try await broker.begin("github")
            _ = try await broker.callback(second)
            #expect(await brokerError { try await broker.callback(second) } == .invalidState)
            #expect(
                Array(recorder.events.dropFirst()) == [
                    .started(provider: "github"), .failed(provider: "github", error: .invalidState),
                    .started(provider: "github"), .completed(provider: "github"), .unmatched,
                ])
            #expect(recorder.steps == ["github token_exchange ok", "github user_info ok"])
            #expect(recorder.calls.withLock { $0.allSatisfy { $0.seconds >= 0 && $0.seconds < 10 } })
        }
    }

    @Test func aFailedProviderCallIsReportedWithItsStepAndCode() async throws {
        let recorder = Recorder()
        try await BrokerHarness.with(providerCalls: recorder, onFlow: { event in recorder.flows.withLock { $0.append(event) } }) { broker in
            await broker.upstream.on("https://github.com/login/oauth/access_token", fail: .timeout)
            let start = try await broker.begin("github")
            #expect(await brokerError { try await broker.callback(start) } == .upstreamTimeout(step: "token_exchange"))
            #expect(recorder.steps == ["github token_exchange upstream_timeout"])
            #expect(
                recorder.events == [
                    .started(provider: "github"), .failed(provider: "github", error: .upstreamTimeout(step: "token_exchange")),
                ])
            // Revocation goes through the account service's exchanges, reported the same way.
            let weibo = try await broker.begin("weibo")
            let account = try await broker.callback(weibo).account
            _ = try await broker.accountService.delete(id: account.accountID)
            #expect(Array(recorder.steps.suffix(2)) == ["weibo token_exchange ok", "weibo revoke ok"])
        }
    }
}
