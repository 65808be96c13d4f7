import Foundation

/// What `POST /device/authorize` hands back: what to show the person, and the state to follow the flow by.
public struct DeviceStart: Sendable {
    /// The flow's state, for `GET /flows/{state}` and the flow webhooks.
    public var state: String
    /// The code the person types at ``verificationURI``.
    public var userCode: String
    /// Where the person goes to sign in.
    public var verificationURI: String
    /// ``verificationURI`` with the code in it, when the provider gave one.
    public var verificationURIComplete: String?
    /// When the device code stops being usable.
    public var expiresAt: Date
    /// Seconds between the broker's polls, as the provider asked.
    public var interval: Int
}

extension AuthorizationService {
    /// Starts a device sign-in (RFC 8628) at `provider` for an API caller: asks the provider for the codes and keeps
    /// the flow pending, with its device code, until a ``DeviceFlowPoller`` ends it.
    ///
    /// `scopes` replace the provider's configured ones for this sign-in (nil asks for those). The flow lives as long as
    /// the provider's `expires_in`; ``onFlow`` hears of the start or the failure as for ``begin(provider:returnTo:binding:endUser:tags:connect:)``.
    /// `settings` are the provider's per-account settings, checked before the provider is asked for codes, and carried
    /// as ``begin(provider:returnTo:binding:endUser:tags:connect:scopes:stepUp:settings:)`` carries them.
    public func beginDevice(
        provider name: String, endUser: EndUser? = nil, tags: [String: String] = [:], scopes: [String]? = nil,
        settings: [String: String] = [:]
    ) async throws(BrokerError) -> DeviceStart {
        do {
            let start = try await startDevice(provider: name, endUser: endUser, tags: tags, scopes: scopes, settings: settings)
            onFlow(.started(provider: name))
            return start
        } catch {
            if let known = registry.provider(named: name) { onFlow(.failed(provider: known.name, error: error)) }
            throw error
        }
    }

    /// ``beginDevice(provider:endUser:tags:scopes:)`` without the report.
    private func startDevice(
        provider name: String, endUser: EndUser?, tags: [String: String], scopes: [String]?, settings given: [String: String]
    ) async throws(BrokerError) -> DeviceStart {
        // Settings are checked, and fill `device_authorization_url`, before the provider is asked for anything.
        let (provider, settings) = try configuredProvider(named: name).applyingSettings(given)
        guard provider.deviceAuthorizationURL != nil else {
            throw .badRequest("Provider \"\(provider.name)\" offers no device sign-in (no device_authorization_url)")
        }
        let answer = try await context.exchange(for: provider).authorizeDevice(scopes: scopes)
        let createdAt = now()
        let state = Self.makeState()
        // RFC 8628 §3.2: expires_in is the lifetime of both codes; the validator bounds it, so no date overflows.
        let flow = PendingFlow(
            state: state, provider: provider.name, binding: Self.apiBinding, createdAt: createdAt,
            expiresAt: createdAt.addingTimeInterval(Double(answer.expiresIn)), endUser: endUser, tags: tags,
            device: DeviceContext(
                deviceCode: answer.deviceCode, interval: answer.interval,
                nextPollAt: createdAt.addingTimeInterval(Double(answer.interval))),
            settings: settings)
        do {
            if let outcomes {
                try await flows.put(flow, recording: .pending(flow, retention: flowTTL), in: outcomes)
            } else {
                try await flows.put(flow)
            }
        } catch {
            throw BrokerError(error)
        }
        return DeviceStart(
            state: state, userCode: answer.userCode, verificationURI: answer.verificationURI,
            verificationURIComplete: answer.verificationURIComplete, expiresAt: flow.expiresAt, interval: answer.interval)
    }

    /// What one turn of a device sign-in did.
    public enum DevicePollStep: Sendable, Equatable {
        /// Nothing: not due, gone, or another replica holds its lock.
        case skipped
        /// Polled; the person has not finished (`authorization_pending`, or `slow_down` with the interval raised).
        case pending
        /// Polled and ended: completed with an account, or failed.
        case ended
    }

    /// Polls the device sign-in `state` once if its next poll is due at `now()`, under `lock` so that no two replicas
    /// poll one device code at once.
    ///
    /// The next poll time is written before the provider is called, so a replica that finds the lock free after this
    /// poll still waits the interval. `slow_down` raises the interval by 5 seconds for this and every later poll
    /// (RFC 8628 §3.5); a timeout doubles it (§3.5, "connection timeout"). Tokens, or any refusal, take the flow
    /// (single use) and end it through ``finish(_:takenAt:bindingProof:obtain:)``, as a callback ends one.
    public func pollDevice(state: String, lock: any RefreshLock, lockTTL: Double) async -> DevicePollStep {
        let key = "device:" + state
        guard let token = try? await lock.acquire(key: key, ttl: lockTTL) else { return .skipped }
        let step = await pollLocked(state: state)
        _ = try? await lock.release(key: key, token: token)
        return step
    }

    /// ``pollDevice(state:lock:lockTTL:)`` once its lock is held.
    private func pollLocked(state: String) async -> DevicePollStep {
        let at = now()
        guard var flow = try? await flows.pending(state: state, now: at), let device = flow.device, device.isDue(at: at) else {
            return .skipped
        }
        flow.device?.nextPollAt = at.addingTimeInterval(Double(device.interval))
        guard (try? await flows.replace(flow)) == true else { return .skipped }
        let polled: Result<DevicePoll, BrokerError>
        do throws(BrokerError) {
            let provider = try configuredProvider(named: flow.provider).applyingSettings(flow.settings).0
            polled = .success(try await context.exchange(for: provider).pollDevice(deviceCode: device.deviceCode))
        } catch {
            polled = .failure(error)
        }
        let answer: FlowEvent.DevicePollAnswer =
            switch polled {
            case .success(.pending): .pending
            case .success(.slowDown): .slowDown
            case .failure(.upstreamTimeout): .timeout
            case .success(.completed): .tokens
            case .failure: .failed
            }
        onFlow(.devicePolled(provider: flow.provider, answer: answer))
        switch polled {
        case .success(.pending):
            return .pending
        case .success(.slowDown), .failure(.upstreamTimeout):
            // Bounded by an hour, well inside what a stored record may hold, so no sum overflows.
            let wanted = if case .success = polled { device.interval + 5 } else { device.interval * 2 }
            let raised = min(wanted, 3_600)
            flow.device?.interval = raised
            flow.device?.nextPollAt = at.addingTimeInterval(Double(raised))
            _ = try? await flows.replace(flow)
            return .pending
        case .success(.completed(let completion)):
            await end(state: state, at: at) { _ throws(BrokerError) in completion }
            return .ended
        case .failure(let error):
            await end(state: state, at: at) { _ throws(BrokerError) in throw error }
            return .ended
        }
    }

    /// Takes the flow `state` and finishes it with what `obtain` gives; nothing when another taker won.
    private func end(state: String, at: Date, obtain: (ProviderConfiguration) async throws(BrokerError) -> ExchangeCompletion) async {
        guard let flow = try? await flows.take(state: state, now: at) else { return }
        _ = await finish(flow, takenAt: at, bindingProof: nil, obtain: obtain)
    }
}
