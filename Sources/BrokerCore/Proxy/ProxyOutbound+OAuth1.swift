import BrokerCrypto

extension ProxyOutbound {
    /// RFC 5849 §3.5.1: the `Authorization: OAuth …` value for `method` on `url`, signed (§3.4) with the consumer
    /// credentials and the account's token credentials; the URL's query and `form` are signed with it (§3.4.1.3.1).
    static func oauth1Header(
        method: String, url: String, form: [(String, String)], _ credential: ProxyCredential,
        _ makeSigner: (OAuth1Credentials) -> OAuth1Signer
    ) throws(Failure) -> String {
        guard let key = credential.clientID, !key.isEmpty, let secret = credential.clientSecret?.value, !secret.isEmpty else {
            throw .unusable(reason: "the provider has no consumer key and secret")
        }
        guard let tokenSecret = credential.tokenSecret?.value else {
            throw .unusable(reason: "the account has no token secret")
        }
        let signer = makeSigner(
            OAuth1Credentials(
                consumerKey: key, consumerSecret: secret, token: credential.accessToken.value, tokenSecret: tokenSecret))
        return signer.authorizationHeader(method: method, url: url, formParameters: form)
    }

    /// The decoded parameters of the caller's body when RFC 5849 §3.4.1.3.1 signs them: a single-part body whose
    /// `Content-Type` is `application/x-www-form-urlencoded`; none otherwise.
    ///
    /// Such a body must have been kept (`body` not nil, at most ``maximumSignedFormBytes``) and must decode whole:
    /// a signature over part of it would only earn a 401 from the provider.
    static func signedFormParameters(_ callerHeaders: [ProxyHeaders.Field], body: [UInt8]?) throws(Failure) -> [(String, String)] {
        let types = callerHeaders.filter { $0.name.lowercased() == "content-type" }.map { mediaType($0.value) }
        guard types.contains("application/x-www-form-urlencoded") else { return [] }
        guard types.count == 1 else { throw .refused(reason: "the request has more than one Content-Type") }
        guard let body, body.count <= maximumSignedFormBytes else {
            throw .refused(reason: "an OAuth 1.0a form body is signed, so it must be at most 1 MiB")
        }
        // application/x-www-form-urlencoded output is ASCII: unreserved bytes, `%XX` escapes, `+`, `=` and `&`.
        guard body.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .refused(reason: "the form body is not URL-encoded") }
        let text = String(decoding: body, as: UTF8.self)
        let strict = PercentEncoding.parseForm(text)
        guard strict.count == PercentEncoding.parseForm(text, .lenient).count else {
            throw .refused(reason: "the form body is not URL-encoded")
        }
        return strict.map { ($0.name, $0.value) }
    }

    /// RFC 9110 §8.3.1: the media type of a `Content-Type` value, lowercased, without parameters or whitespace.
    static func mediaType(_ value: String) -> String {
        let type = value.utf8.prefix { $0 != 0x3B }
        let trimmed = type.drop(while: ProxyHeaders.isWhitespace).reversed().drop(while: ProxyHeaders.isWhitespace).reversed()
        return String(decoding: trimmed, as: UTF8.self).lowercased()
    }
}
