import BrokerCore
import BrokerHTTP
import Foundation

/// Runs a provider's verification request (``CredentialScheme/Verification``) with an entered credential placed as
/// the proxy places it, through the proxy's outbound client and under its address rules.
///
/// The request carries no caller field and no body; only the status decides, and the answer's body is read (up to
/// ``maximumAnswerBytes``) only when the provider names the user in it (`user_id_field`).
struct CredentialVerifier: Sendable {
    let client: HTTPClient
    /// Seconds the whole verification may take.
    let timeout: Double

    /// What the provider said.
    struct Outcome: Sendable {
        /// The provider's status.
        var status: Int
        /// Whether the status is one of the declared valid ones.
        var valid: Bool
        /// The user id the answer names at `user_id_field`, when the provider declares one and the answer has it.
        var userID: String?
    }

    /// The most bytes of a verification answer read for its user id.
    static let maximumAnswerBytes = 64 * 1024

    /// Sends `provider`'s verification request with `values`; nil when the provider declares none.
    func verify(_ values: CredentialValues, provider: ProviderConfiguration) async throws(BrokerError) -> Outcome? {
        guard let verification = provider.credentials?.verification else { return nil }
        let base = try ProxyHandler.base(of: provider)
        let path = verification.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var credential = ProxyCredential(accessToken: values.stored, clientID: provider.clientID)
        credential.entered = values
        let made: ProxyOutbound.Request
        do throws(ProxyOutbound.Failure) {
            made = try ProxyOutbound.make(
                method: verification.method, base: base, path: String(path[0]), query: path.count > 1 ? String(path[1]) : nil,
                callerHeaders: [("Accept", "application/json")], credential: credential,
                placement: ProxyCredentialPlacement(provider: provider))
        } catch {
            switch error {
            case .refused(let reason), .unusable(let reason): throw .providerUnavailable(provider.name, reason: reason)
            }
        }
        let request = HTTPClientRequest(
            method: verification.method, url: made.url, headers: made.headers, body: .bytes([]),
            addressPolicy: AddressPolicy(allowedHosts: provider.apiAllowPrivate ? [base.host] : []))
        let answer: HTTPClientResponse
        do { answer = try await client.stream(request, timeout: timeout) } catch {
            throw ProxyHandler.failure(error, provider: provider.name).verifying
        }
        let valid = verification.validStatuses.contains(answer.status)
        var userID: String?
        if valid, let field = verification.userIDField {
            userID = await Self.userID(at: field, in: answer.body)
        } else {
            answer.body.cancel()
        }
        return Outcome(status: answer.status, valid: valid, userID: userID)
    }

    /// The string or integer at `path` in the JSON answer, when it is a usable uid; nil otherwise.
    private static func userID(at path: ProviderJSONPath, in body: HTTPClientResponse.Body) async -> String? {
        var bytes: [UInt8] = []
        do {
            for try await piece in body {
                bytes += piece
                guard bytes.count <= maximumAnswerBytes else {
                    body.cancel()
                    return nil
                }
            }
        } catch {
            return nil
        }
        guard let root = try? JSONSerialization.jsonObject(with: Data(bytes)),
            let uid = ProviderJSONPath.userID(at: [path], in: root), ProviderUserID.problem(with: uid) == nil
        else { return nil }
        return uid
    }
}

extension BrokerError {
    /// A proxy failure renamed to the verification step.
    fileprivate var verifying: BrokerError {
        switch self {
        case .upstreamError(_, let reason): .upstreamError(step: "verification", reason: reason)
        case .upstreamTimeout: .upstreamTimeout(step: "verification")
        default: self
        }
    }
}
