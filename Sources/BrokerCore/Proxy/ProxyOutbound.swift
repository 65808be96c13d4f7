import BrokerCrypto

/// The request an API proxy call sends to the provider: the URL and header fields, with the credential placed.
///
/// It joins the provider's base with the caller's path and query (``ProxyTarget``), keeps the caller's fields that
/// may travel on (``ProxyHeaders/request(_:)``), adds the fields the provider wants, and places the account's
/// credential as ``ProxyCredentialPlacement`` says. The body is the caller's, unchanged; it is read here only to sign
/// an OAuth 1.0a form body (RFC 5849 §3.4.1.3.1). Every refusal is a fixed sentence that repeats no input.
public enum ProxyOutbound {
    /// The outbound URL and header fields; the method and body are the caller's.
    public struct Request: Sendable {
        /// The absolute `https://` URL on the provider's API host.
        public let url: String
        /// The fields to send, in order: the caller's kept ones, the provider's own, then the credential's.
        public let headers: [ProxyHeaders.Field]
    }

    /// Why no outbound request was made.
    public enum Failure: Error, Sendable, Equatable {
        /// The caller's method, path, query, fields or body cannot go out this way (answer 400); `reason` is fixed text.
        case refused(reason: String)
        /// The provider's configuration or the account's credential cannot make the call (answer 5xx); `reason` is fixed text.
        case unusable(reason: String)
    }

    /// The most bytes of an OAuth 1.0a form body that is read to be signed: the proxy's kept-body limit (1 MiB).
    public static let maximumSignedFormBytes = 1 << 20

    /// Header fields (lowercase) a placement may not write from configuration: the broker writes `Authorization`, the
    /// client writes `Host` and the framing, and `Cookie` would share one session among callers.
    static let reservedNames: Set<String> = ProxyHeaders.requestDropped.union(ProxyHeaders.hopByHop)

    /// The request for `method` on `path` (starting `/`) and `query` (without `?`, nil or empty for none) under `base`.
    ///
    /// - Parameters:
    ///   - callerHeaders: The caller's fields as received; filtered here.
    ///   - credential: The account's tokens and the provider's client credentials.
    ///   - placement: How the provider takes the credential.
    ///   - body: The caller's body when it was kept whole (an empty array for none), nil when it streams. Only an
    ///     OAuth 1.0a placement with an `application/x-www-form-urlencoded` body reads it, and then requires it.
    ///   - makeSigner: Builds the OAuth 1.0a signer; tests inject the nonce and timestamp of a published vector.
    public static func make(
        method: String,
        base: ProxyTarget.Base,
        path: String,
        query: String?,
        callerHeaders: [ProxyHeaders.Field],
        credential: ProxyCredential,
        placement: ProxyCredentialPlacement,
        body: [UInt8]? = nil,
        makeSigner: (OAuth1Credentials) -> OAuth1Signer = { OAuth1Signer(credentials: $0) }
    ) throws(Failure) -> Request {
        // RFC 9110 §9.1: a method is a token.
        guard ProxyHeaders.isToken(method) else { throw .refused(reason: "the method is not an HTTP token") }
        let access = credential.accessToken.value
        if case .entered = placement.token {
            guard credential.entered != nil else { throw .unusable(reason: "the account holds no entered credential") }
        } else {
            guard !access.isEmpty, ProxyHeaders.isFieldValue(access), !access.utf8.contains(0x20) else {
                throw .unusable(reason: "the account's token cannot be sent in a request")
            }
        }
        let added = try queryAdditions(placement.token, credential: credential)
        var url: String
        do throws(ProxyTarget.Failure) {
            url = try ProxyTarget.url(base: base, path: path, query: query)
        } catch {
            switch error {
            case .refused(let reason): throw .refused(reason: reason)
            case .invalidBase(let reason): throw .unusable(reason: "the API base " + reason)
            }
        }
        if !added.isEmpty {
            let written = Set(PercentEncoding.parseForm(query ?? "", .lenient).map(\.name))
            // The caller may not name the parameters that carry the credential; the provider would read one of two.
            // TMDB's `api_key` is the broker's even when a Read Access Token travels as Bearer instead.
            var reserved = added.map(\.0)
            if case .tmdbSession = placement.token { reserved.append("api_key") }
            guard reserved.allSatisfy({ !written.contains($0) }) else {
                throw .refused(reason: "the query names a parameter the broker sets")
            }
            // Appended after the caller's query was checked: RFC 3986 §2.3 unreserved bytes and escapes only, so the
            // credential can neither end the query nor be read as another parameter (an encoded `/` included).
            let encoded = added.map { PercentEncoding.rfc3986($0.0) + "=" + PercentEncoding.rfc3986($0.1) }
            url += (query?.isEmpty ?? true ? "?" : "&") + encoded.joined(separator: "&")
        }

        var own = try providerFields(placement, credential: credential)
        switch placement.token {
        case .bearer:
            own.append(("Authorization", "Bearer " + access))
        case .queryParameter:
            break
        case .header(let placement):
            // Checked when the providers file was read; checked again here since a preset or a test may build one.
            let field: ProxyHeaders.Field = (placement.name, placement.value(access))
            let lowered = field.name.lowercased()
            guard ProxyHeaders.isWellFormed(field), lowered == "authorization" || !reservedNames.contains(lowered),
                !lowered.hasPrefix(ProxyHeaders.brokerPrefix)
            else { throw .unusable(reason: "the account's token cannot be sent in the provider's header") }
            own.append(field)
        case .tmdbSession:
            if let key = credential.apiKey?.value, TMDBClient.isReadAccessToken(key) { own.append(("Authorization", "Bearer " + key)) }
        case .oauth1Signature:
            let form = try signedFormParameters(callerHeaders, body: body)
            // RFC 5849 §3.5: protocol parameters travel in one place, here the header; a caller's `oauth_*` in the
            // query or body would be signed as a second, conflicting copy.
            let names = PercentEncoding.parseForm(query ?? "", .lenient).map(\.name) + form.map(\.0)
            guard !names.contains(where: { $0.hasPrefix("oauth_") }) else {
                throw .refused(reason: "the request names a parameter the broker sets")
            }
            own.append(("Authorization", try oauth1Header(method: method, url: url, form: form, credential, makeSigner)))
        case .entered(let entered):
            if let field = try enteredField(entered, credential: credential) { own.append(field) }
            for extra in placement.enteredHeaders {
                guard let values = credential.entered else { throw .unusable(reason: "the account holds no entered credential") }
                let field: ProxyHeaders.Field = (extra.name, CredentialScheme.render(extra.format, values))
                guard ProxyHeaders.isWellFormed(field), !reservedNames.contains(field.name.lowercased()),
                    !field.name.lowercased().hasPrefix(ProxyHeaders.brokerPrefix)
                else { throw .unusable(reason: "the account's credential cannot be sent in a header") }
                own.append(field)
            }
        }
        // A caller's field the broker writes itself is dropped (names compared without case, with no set or
        // lowercased copy per call: `own` holds one to three fields), in the filter's one pass and array.
        return Request(url: url, headers: ProxyHeaders.request(callerHeaders, replacedBy: own))
    }

    /// The query parameters `token` adds: the access token under its name, or TMDB's session and v3 key.
    static func queryAdditions(_ token: ProxyCredentialPlacement.Token, credential: ProxyCredential) throws(Failure)
        -> [(String, String)]
    {
        switch token {
        case .bearer, .header, .oauth1Signature, .entered(.header), .entered(.basic):
            return []
        case .entered(.query(let name, let format)):
            guard ProxyHeaders.isToken(name), let values = credential.entered else {
                throw .unusable(reason: "the credential's query parameter cannot be written")
            }
            return [(name, CredentialScheme.render(format, values))]
        case .queryParameter(let name):
            guard ProxyHeaders.isToken(name) else { throw .unusable(reason: "the token's query parameter name is not a token") }
            return [(name, credential.accessToken.value)]
        case .tmdbSession:
            guard let key = credential.apiKey?.value, !key.isEmpty else { throw .unusable(reason: "the provider has no API key") }
            // TMDB v3 authentication: `session_id` names the user's session; a v3 key travels as `api_key`, a Read
            // Access Token as a Bearer header instead.
            let session = ("session_id", credential.accessToken.value)
            return TMDBClient.isReadAccessToken(key) ? [session] : [("api_key", key), session]
        }
    }

    /// The header field an entered credential travels in: the declared field with its format filled in, or
    /// `Authorization: Basic` (RFC 7617 §2); nil when it travels in the query.
    static func enteredField(_ placement: CredentialScheme.Placement, credential: ProxyCredential) throws(Failure)
        -> ProxyHeaders.Field?
    {
        guard let values = credential.entered else { throw .unusable(reason: "the account holds no entered credential") }
        let field: ProxyHeaders.Field
        switch placement {
        case .query: return nil
        case .header(let name, let format): field = (name, CredentialScheme.render(format, values))
        case .basic:
            guard let encoded = basicCredentials(values) else { throw .unusable(reason: "the account's user name or password is missing") }
            field = ("Authorization", "Basic " + encoded)
        }
        guard ProxyHeaders.isWellFormed(field) else { throw .unusable(reason: "the account's credential cannot be sent in a header") }
        return field
    }

    /// RFC 7617 §2: base64 of `user-id ":" password`, UTF-8 (§2.1 `charset="UTF-8"`); nil without both fields.
    public static func basicCredentials(_ values: CredentialValues) -> String? {
        guard let user = values["username"], let password = values["password"] else { return nil }
        return Base64.encode(Array((user + ":" + password).utf8))
    }

    /// The provider's fixed fields and its client-id field, each checked: a well-formed field the broker may write.
    static func providerFields(_ placement: ProxyCredentialPlacement, credential: ProxyCredential) throws(Failure)
        -> [ProxyHeaders.Field]
    {
        var fields: [ProxyHeaders.Field] = placement.headers.map { (name: $0.0, value: $0.1) }
        if let name = placement.clientIDHeader {
            guard let id = credential.clientID, !id.isEmpty else { throw .unusable(reason: "the provider has no client id") }
            fields.append((name, id))
        }
        for field in fields {
            guard ProxyHeaders.isWellFormed(field), !reservedNames.contains(field.name.lowercased()),
                !field.name.lowercased().hasPrefix(ProxyHeaders.brokerPrefix)
            else { throw .unusable(reason: "the provider's API header fields are not fit to send") }
        }
        return fields
    }
}
