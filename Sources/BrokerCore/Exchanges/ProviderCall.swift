import Foundation

/// One provider call's common part: sending through the ``UpstreamClient``, naming failures by step, keeping secrets out of them, and reporting each call.
///
/// Every exchange sends through here, so a timeout, a transport failure or an
/// oversized answer reads the same for every provider kind, every request
/// carries the same User-Agent, no error reason repeats a secret the
/// call carried, even when a provider echoes one, and every call reaches the
/// ``ProviderCallObserver`` with its provider, step and duration.
struct ProviderCall: Sendable {
    /// The User-Agent sent to providers; GitHub's API refuses requests without one.
    static let userAgent = "token-broker"

    /// The outbound client.
    let upstream: any UpstreamClient
    /// The provider the calls go to, as the registry names it; what the observer hears them under.
    var provider: String = ""
    /// Hears of every call; nil reports nothing.
    var observer: (any ProviderCallObserver)? = nil

    /// Sends `request` and runs `check` on the answer; an upstream error from either has `secrets` redacted.
    ///
    /// `check` is the kind's response checks (status, body shape, provider
    /// error), which name the failure they found. The observer hears of the
    /// call once `check` has decided, so a refusal inside a 200 counts as a failure.
    func perform<Value>(
        _ request: UpstreamRequest, step: ProviderStep, secrets: [String],
        check: (UpstreamResponse) throws(BrokerError) -> Value
    ) async throws(BrokerError) -> Value {
        let started = ContinuousClock.now
        do {
            let value = try check(try await send(request, step: step))
            report(step, since: started, error: nil)
            return value
        } catch {
            let redacted = Self.redacting(secrets, in: error)
            report(step, since: started, error: redacted)
            throw redacted
        }
    }

    /// Tells the observer, if any, how the call that began at `started` ended.
    private func report(_ step: ProviderStep, since started: ContinuousClock.Instant, error: BrokerError?) {
        guard let observer else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        observer.providerCallFinished(provider: provider, step: step, seconds: seconds, error: error)
    }

    /// Sends `request`, mapping a timeout to ``BrokerError/upstreamTimeout(step:)`` and a transport failure or an oversized answer to an upstream error.
    func send(_ request: UpstreamRequest, step: ProviderStep) async throws(BrokerError) -> UpstreamResponse {
        do {
            return try await upstream.send(request)
        } catch {
            switch error {
            case .timeout, .connectTimeout: throw .upstreamTimeout(step: step.rawValue)
            case .transport(_, let message): throw .upstreamError(step: step.rawValue, reason: "transport error: \(message)")
            case .tooLarge: throw .upstreamError(step: step.rawValue, reason: error.description)
            }
        }
    }

    /// `error` with each of `values` replaced in its reason: defence in depth should a provider echo one.
    static func redacting(_ values: [String], in error: BrokerError) -> BrokerError {
        guard case .upstreamError(let step, let reason) = error else { return error }
        var cleaned = reason
        // Values under 8 characters are no credential a provider issues, and replacing them would garble the sentence.
        for value in values where value.count >= 8 {
            cleaned = cleaned.replacingOccurrences(of: value, with: "<redacted>")
        }
        return .upstreamError(step: step, reason: cleaned)
    }

    /// Whether a token is fit to keep and to send back: 1–512 bytes without control characters (C0, DEL, C1).
    static func isUsableToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 512
            && token.unicodeScalars.allSatisfy { $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) }
    }
}
