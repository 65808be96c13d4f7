import Foundation

extension OAuth2Client {
    /// Fetches each of the provider's ``ResourceLookup``s with the grant's access token and adds what it keeps to the grant's extras.
    ///
    /// Each is a `GET` with `Authorization: Bearer` (RFC 6750 §2.1) through the
    /// same outbound path as the user endpoint: no redirects, the deadline and
    /// size cap, and the call metrics under the step `resource_lookup`. Any
    /// failure fails the connection, as a failed user lookup does: a back end
    /// relying on `raw.<name>` (Atlassian's cloud ids) then never finds an
    /// account without it, and the user simply connects again. An array answer
    /// loses entries from its end until the account's kept fields fit
    /// ``TokenExtras/maximumBytes``; one that does not fit even so is refused.
    func lookUpResources(into grant: inout TokenGrant) async throws(BrokerError) {
        guard !settings.resourceLookups.isEmpty else { return }
        let step = ProviderStep.resourceLookup
        var fields = grant.extras.flatMap(TokenExtras.object) ?? [:]
        // The ID token counts towards the account's kept fields as TokenExtras.split counts it.
        let budget = TokenExtras.maximumBytes - (grant.idToken.map { $0.value.utf8.count + 16 } ?? 0)
        for lookup in settings.resourceLookups {
            var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", ProviderCall.userAgent)]
            headers.append(("Authorization", "Bearer " + grant.accessToken.value))
            let request = UpstreamRequest(method: "GET", url: lookup.url, headers: settings.headers(headers))
            let secrets = [grant.accessToken.value, settings.credentials.secret.value]
            let value = try await call.perform(request, step: step, secrets: secrets) { response throws(BrokerError) in
                try Self.keptResource(from: response, lookup: lookup, step: step.rawValue)
            }
            fields[lookup.name] = value
            while let text = TokenExtras.serialize(fields), text.utf8.count > budget {
                guard var list = fields[lookup.name] as? [Any], !list.isEmpty else {
                    throw .upstreamError(
                        step: step.rawValue,
                        reason: "the \(lookup.name) answer is too large to keep (over \(TokenExtras.maximumBytes) bytes)")
                }
                list.removeLast()
                fields[lookup.name] = list
            }
        }
        grant.extras = TokenExtras.serialize(fields)
    }

    /// What `lookup` keeps of `response`, after the status, body and provider-error checks every answer passes.
    static func keptResource(from response: UpstreamResponse, lookup: ResourceLookup, step: String) throws(BrokerError) -> Any {
        guard (200..<300).contains(response.status) else {
            _ = try OAuth2ResponseValidator.jsonObject(from: response, step: step)  // throws the non-2xx error
            throw .upstreamError(step: step, reason: "HTTP \(response.status) (not a 2xx status)")
        }
        guard let answer = try? JSONSerialization.jsonObject(with: Data(response.body)) else {
            throw .upstreamError(step: step, reason: "the body is not valid JSON")
        }
        if let object = answer as? [String: Any], let summary = ProviderErrorSummary(fields: object) {
            throw .upstreamError(step: step, reason: "HTTP \(response.status) with \(summary)")
        }
        switch lookup.kept(from: answer) {
        case .success(let value): return value
        case .failure(let problem): throw .upstreamError(step: step, reason: problem.description)
        }
    }
}
