import BrokerCrypto
import Foundation

/// Signs OAuth 1.0a requests with HMAC-SHA1 and writes their `Authorization` header (RFC 5849 §3).
///
/// Nonce and timestamp come from injected closures so tests can replay published vectors; the
/// defaults are 160 bits from the kernel and the current Unix time.
public struct OAuth1Signer: Sendable {
    /// The client and token credentials every request is signed with.
    public let credentials: OAuth1Credentials
    private let nonce: @Sendable () -> String
    private let timestamp: @Sendable () -> Int

    /// Creates a signer; `nonce` and `timestamp` are called once per signed request.
    public init(
        credentials: OAuth1Credentials,
        nonce: @escaping @Sendable () -> String = { OAuth1Signer.randomNonce() },
        timestamp: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) {
        self.credentials = credentials
        self.nonce = nonce
        self.timestamp = timestamp
    }

    /// Returns a fresh nonce of 20 random bytes as 40 lowercase hex digits (160 bits).
    ///
    /// RFC 5849 §3.3: the nonce must be unique for each request with the same timestamp;
    /// hex keeps it alphanumeric, which every provider accepts.
    public static func randomNonce() -> String {
        Hex.encode(SecureRandom.bytes(20))
    }

    /// Signs a request: returns the full `Authorization` header value (`OAuth oauth_consumer_key="…", …, oauth_signature="…"`).
    ///
    /// - Parameters:
    ///   - method: The HTTP method; it is uppercased for signing.
    ///   - url: The request URL including any query; its query parameters are signed too.
    ///   - extraOAuthParameters: Protocol parameters for this step, e.g. `oauth_callback` (§2.1) or `oauth_verifier` (§2.3).
    ///   - formParameters: Decoded parameters of a single-part `application/x-www-form-urlencoded` body (§3.4.1.3.1).
    ///   - includeVersion: Whether to send and sign `oauth_version="1.0"`, which §3.1 makes optional.
    ///   - realm: An optional `realm` (§3.5.1); it is sent but never signed.
    public func authorizationHeader(
        method: String,
        url: String,
        extraOAuthParameters: [(String, String)] = [],
        formParameters: [(String, String)] = [],
        includeVersion: Bool = true,
        realm: String? = nil
    ) -> String {
        // RFC 5849 §3.1: the protocol parameters of an authenticated request.
        var oauth: [(String, String)] = [
            ("oauth_consumer_key", credentials.consumerKey),
            ("oauth_nonce", nonce()),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", String(timestamp())),
        ]
        if let token = credentials.token { oauth.append(("oauth_token", token)) }
        if includeVersion { oauth.append(("oauth_version", "1.0")) }
        oauth += extraOAuthParameters
        let baseString = Self.signatureBaseString(method: method, url: url, parameters: oauth + formParameters)
        let signature = Self.signature(
            baseString: baseString, consumerSecret: credentials.consumerSecret, tokenSecret: credentials.tokenSecret)
        oauth.append(("oauth_signature", signature))
        return Self.headerValue(oauth, realm: realm)
    }

    /// RFC 5849 §3.5.1: `OAuth `, then `name="value"` pairs, both percent-encoded, joined by `, `; realm first.
    static func headerValue(_ parameters: [(String, String)], realm: String?) -> String {
        var items: [String] = []
        if let realm {
            // RFC 2617 §1.2: realm is a quoted-string, so only `"` and `\` need escaping.
            let escaped = realm.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            items.append("realm=\"\(escaped)\"")
        }
        let encoded: [(name: String, value: String)] = parameters.map {
            (PercentEncoding.rfc3986($0.0), PercentEncoding.rfc3986($0.1))
        }
        for pair in encoded.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
            items.append("\(pair.name)=\"\(pair.value)\"")
        }
        return "OAuth " + items.joined(separator: ", ")
    }
}
