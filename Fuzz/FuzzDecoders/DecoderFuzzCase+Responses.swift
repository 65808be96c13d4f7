#if FUZZING
import FuzzSupport
@testable import BrokerCore

/// Provider answers: the OAuth 2.0 validator, the OAuth 1.0a answers and TMDB's, under every status and Content-Type.
extension DecoderFuzzCase {
    /// Statuses a provider answer may carry; the parameter byte picks one.
    static let statuses = [200, 201, 204, 302, 400, 401, 403, 500, 503]
    /// Content-Types a provider answer may carry (nil: none); the parameter byte picks one.
    static let contentTypes: [String?] = [
        "application/json", "application/json; charset=utf-8", "application/x-www-form-urlencoded",
        "text/html;charset=utf-8", "text/plain", "text/javascript", nil,
    ]

    /// The payload as a provider's HTTP answer.
    var response: UpstreamResponse {
        let p = Int(input.parameter)
        let status = Self.statuses[p % Self.statuses.count]
        let type = Self.contentTypes[(p / Self.statuses.count) % Self.contentTypes.count]
        return UpstreamResponse(status: status, headers: type.map { [("Content-Type", $0)] } ?? [], body: input.payload)
    }

    /// RFC 6749 §5.1–5.2: a grant only from a 2xx answer with an access token; no error repeats a token.
    func checkOAuth2Response() {
        let response = self.response
        do {
            let grant = try OAuth2ResponseValidator.tokenGrant(from: response, step: "token")
            require((200..<300).contains(response.status), "a grant from a non-2xx answer")
            require(!grant.accessToken.value.isEmpty, "a grant without an access token")
        } catch {
            requireNoEcho(error)
        }
        do {
            _ = try OAuth2ResponseValidator.jsonObject(from: response, step: "user")
            require((200..<300).contains(response.status), "a user object from a non-2xx answer")
        } catch {
            requireNoEcho(error)
        }
        do {
            try OAuth2ResponseValidator.checkRevocation(response, step: "revoke")
            require((200..<300).contains(response.status), "a revocation accepted from a non-2xx answer")
        } catch {
            requireNoEcho(error)
        }
    }

    /// RFC 5849 §2.1/§2.3 answers (form or JSON) and Twitter's error bodies; no error repeats a token.
    func checkOAuth1Response() {
        let response = self.response
        do {
            let fields = try OAuth1Client.formFields(of: response, step: "request_token")
            require((200..<300).contains(response.status), "form fields from a non-2xx answer")
            _ = fields["oauth_token"]
        } catch {
            requireNoEcho(error)
        }
        do {
            _ = try OAuth1Client.jsonObject(of: response, step: "verify_credentials")
        } catch {
            requireNoEcho(error)
        }
        if let summary = OAuth1Client.errorSummary(of: input.payload) {
            require(!summary.contains(DecoderFixtures.responseSecret), "an error summary repeats a token")
            require(summary.utf8.count <= 120, "an error summary of \(summary.utf8.count) bytes")
        }
    }

    /// TMDB's answers: an object only from a 2xx answer without `success: false`; no error repeats a token.
    func checkTMDBResponse() {
        let response = self.response
        do {
            let object = try TMDBClient.checkedObject(of: response, step: "session")
            require((200..<300).contains(response.status), "a TMDB object from a non-2xx answer")
            require(!TMDBClient.isFalse(object["success"]) && !TMDBClient.isTrue(object["failure"]), "a failed TMDB answer accepted")
            _ = try? TMDBClient.requireSuccess(object, step: "session")
        } catch {
            requireNoEcho(error)
        }
    }

    /// A provider's body is never repeated: an error shows at most an error name and a numeric code (house rule).
    private func requireNoEcho(_ error: BrokerError) {
        let text = "\(error.code) \(error.message) \(error)"
        require(!text.contains(DecoderFixtures.responseSecret), "a provider error repeats a token from the body")
        require(error.message.utf8.count <= 300, "a provider error message of \(error.message.utf8.count) bytes")
    }
}
#endif
