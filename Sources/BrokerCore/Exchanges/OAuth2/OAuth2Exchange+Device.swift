import Foundation

extension OAuth2Exchange {
    /// The grant type of a device poll (RFC 8628 §3.4).
    static let deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// POSTs `client_id` (or the client's authentication) and `scope` to the device authorization endpoint (RFC 8628 §3.1)
    /// and checks the answer (§3.2) with ``DeviceAuthorizationValidator``.
    func authorizeDevice(scopes: [String]?) async throws(BrokerError) -> DeviceAuthorization {
        guard let url = settings.deviceAuthorizationURL else {
            throw .badRequest("Provider \"\(settings.name)\" offers no device sign-in (no device_authorization_url)")
        }
        let scopes = scopes ?? settings.scopes
        var form: [(String, String)] = []
        if !scopes.isEmpty { form.append(("scope", scopes.joined(separator: settings.scopeSeparator))) }
        let request = client.tokenRequest(url: url, form: form)
        let step = ProviderStep.deviceAuthorization
        let allowHTTP = settings.deviceAllowHTTP
        return try await context.call.perform(request, step: step, secrets: [settings.credentials.secret.value]) {
            response throws(BrokerError) in
            let fields = try OAuth2ResponseValidator.checkedFields(of: response, step: step.rawValue, acceptForm: true)
            return try DeviceAuthorizationValidator.authorization(from: fields, allowHTTP: allowHTTP)
        }
    }

    /// Polls the token endpoint once (RFC 8628 §3.4) and reads the answer as §3.5 says.
    ///
    /// The error is read from the body whatever the status: GitHub answers its device errors with HTTP 200.
    /// `authorization_pending` and `slow_down` keep the flow going; `access_denied` (Microsoft:
    /// `authorization_declined`) is ``BrokerError/accessDenied``, `expired_token` (GitHub's prose: `token_expired`)
    /// is ``BrokerError/expired``, and any other error ends the flow too (§3.5: "MUST stop").
    func pollDevice(deviceCode: Secret) async throws(BrokerError) -> DevicePoll {
        let request = client.tokenRequest(
            url: settings.tokenURL, form: [("grant_type", Self.deviceGrantType), ("device_code", deviceCode.value)])
        let step = ProviderStep.tokenExchange
        let layout = settings.tokenAnswer
        let answer: DeviceTokenAnswer = try await context.call.perform(
            request, step: step, secrets: [deviceCode.value, settings.credentials.secret.value]
        ) { response throws(BrokerError) -> DeviceTokenAnswer in
            if let code = ResponseBody(response.body).fields(acceptForm: true)?["error"] as? String {
                switch code {
                case "authorization_pending": return .poll(.pending)
                case "slow_down": return .poll(.slowDown)
                case "access_denied", "authorization_declined": throw .accessDenied
                case "expired_token", "token_expired": throw .expired
                default:
                    let shown =
                        code.utf8.count <= 64 && code.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) ? code : "an error"
                    throw .upstreamError(step: step.rawValue, reason: "the provider ended the device sign-in with \(shown)")
                }
            }
            return .tokens(try OAuth2ResponseValidator.tokenGrant(from: response, step: step.rawValue, layout: layout))
        }
        switch answer {
        case .poll(let poll): return poll
        case .tokens(let grant): return .completed(try await completion(of: grant))
        }
    }
}

/// What the token endpoint answered a device poll: a state of the poll, or tokens still to be named by their user.
enum DeviceTokenAnswer {
    /// Pending or slow down.
    case poll(DevicePoll)
    /// The tokens.
    case tokens(TokenGrant)
}
