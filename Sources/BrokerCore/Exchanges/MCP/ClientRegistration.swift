import BrokerCrypto
import Foundation

/// The client the broker registered at a remote MCP server's authorization server (RFC 7591 §3.2.1), kept in the
/// store so every replica, and the broker after a restart, uses the same one.
///
/// Its ``key`` is one per server, authorization server and redirect URI: a server that moves to another
/// authorization server, or a broker given another public URL, registers anew (the MCP authorization
/// specification keys stored credentials by the authorization server's issuer).
public struct ClientRegistration: Sendable, Equatable {
    /// ``key(server:issuer:redirectURI:)`` of the three below.
    public var key: String { Self.key(server: server, issuer: issuer, redirectURI: redirectURI) }
    /// The MCP server (the protected resource).
    public var server: String
    /// The authorization server's issuer identifier (RFC 8414 §2).
    public var issuer: String
    /// The redirect URI registered, the broker's callback.
    public var redirectURI: String
    /// `client_id` as issued (RFC 7591 §3.2.1).
    public var clientID: String
    /// `client_secret` when one was issued.
    public var clientSecret: Secret?
    /// How the client authenticates at the token endpoint: `none` or what the server returned.
    public var authentication: ClientAuthentication
    /// When the broker registered it.
    public var registeredAt: Date

    /// Creates a registration record.
    public init(
        server: String, issuer: String, redirectURI: String, clientID: String, clientSecret: Secret? = nil,
        authentication: ClientAuthentication = .publicClient, registeredAt: Date
    ) {
        self.server = server
        self.issuer = issuer
        self.redirectURI = redirectURI
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authentication = authentication
        self.registeredAt = registeredAt
    }

    /// The store key of a registration: `mcp:` and the SHA-256 of the server, issuer and redirect URI, each
    /// length-prefixed, in hex; short and of one fixed length whatever the URLs' lengths.
    public static func key(server: String, issuer: String, redirectURI: String) -> String {
        var bytes: [UInt8] = []
        for part in [server, issuer, redirectURI] {
            bytes += Array("\(part.utf8.count):".utf8) + Array(part.utf8)
        }
        return "mcp:" + Hex.encode(SHA256.hash(bytes))
    }
}

/// Stores a ``ClientRegistration`` as a small JSON object, its secret sealed like account secrets.
///
/// `{"version":1,"server","issuer","redirect_uri","client_id","client_secret","token_endpoint_auth_method","registered_at"}`.
/// With a `sealer` the secret is `sealed:v1:<kid>:<nonce>:<ciphertext>` with `client:<key>` as associated data, as
/// ``AppTokenCodec`` seals app tokens; a plaintext value is read too.
public enum ClientRegistrationCodec {
    /// The format written and read.
    static let version = 1
    /// The largest stored value read, in bytes.
    static let maximumBytes = 32 * 1024

    /// The stored bytes of `registration`.
    public static func encode(_ registration: ClientRegistration, sealer: EncryptedAccountCodec?) -> [UInt8] {
        var object: [String: Any] = [
            "version": version, "server": registration.server, "issuer": registration.issuer,
            "redirect_uri": registration.redirectURI, "client_id": registration.clientID,
            "token_endpoint_auth_method": registration.authentication.rawValue,
            "registered_at": RFC3339Date.formatWithMillis(registration.registeredAt),
        ]
        if let secret = registration.clientSecret?.value {
            if let sealer {
                let sealed = sealer.seal(secret, accountID: "client:" + registration.key, field: "client_secret")
                object["client_secret"] = AppTokenCodec.sealedPrefix + sealed.kid + ":" + sealed.nonce + ":" + sealed.ct
            } else {
                object["client_secret"] = secret
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return [UInt8](data)
    }

    /// The registration in `bytes`, stored under `key`; ``StoreError/corrupt(path:reason:)`` naming `path` when it does
    /// not decode, open, or belong to `key`.
    public static func decode(_ bytes: [UInt8], key: String, path: String, sealer: EncryptedAccountCodec?) throws(StoreError)
        -> ClientRegistration
    {
        func corrupt(_ reason: String) -> StoreError { .corrupt(path: path, reason: reason) }
        guard bytes.count <= maximumBytes, let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            throw corrupt("not a client registration record")
        }
        guard ProviderValue.integer(object["version"] as Any) == version else { throw corrupt("unsupported client registration version") }
        guard let server = object["server"] as? String, let issuer = object["issuer"] as? String,
            let redirect = object["redirect_uri"] as? String, let clientID = object["client_id"] as? String,
            let method = (object["token_endpoint_auth_method"] as? String).flatMap(ClientAuthentication.init(rawValue:)),
            let registered = object["registered_at"] as? String
        else { throw corrupt("a client registration record lacks a field") }
        var secret: Secret?
        if let stored = object["client_secret"] as? String {
            if stored.hasPrefix(AppTokenCodec.sealedPrefix) {
                guard let sealer else { throw corrupt("client_secret is sealed but no encryption key is configured") }
                let parts = stored.dropFirst(AppTokenCodec.sealedPrefix.count).split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 3 else { throw corrupt("client_secret has a malformed sealed value") }
                let envelope = EncryptedField(kid: String(parts[0]), nonce: String(parts[1]), ct: String(parts[2]))
                secret = Secret(
                    try sealer.open(.sealed(envelope), sealedRecord: true, accountID: "client:" + key, field: "client_secret", path: path))
            } else {
                secret = Secret(stored)
            }
        }
        let registration = ClientRegistration(
            server: server, issuer: issuer, redirectURI: redirect, clientID: clientID, clientSecret: secret, authentication: method,
            registeredAt: try JSONRecord.date(registered, field: "registered_at", path: path))
        guard ExactKey.same(registration.key, key) else { throw corrupt("the client registration record belongs to another key") }
        return registration
    }
}
