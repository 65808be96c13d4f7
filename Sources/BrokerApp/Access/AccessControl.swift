import BrokerCore
import BrokerCrypto
import BrokerHTTP

/// Who may use an account: a service presenting the API key (any account), or the
/// browser whose signed session cookie lists it.
struct AccessControl: Sendable {
    /// `BROKER_API_KEY`; nil means service endpoints always answer 401.
    let apiKey: Secret?
    /// The key that signs session cookies (`BROKER_SECRET` or the generated one).
    let cookieSecret: [UInt8]
    /// How long a session cookie lives, in seconds.
    let sessionMaxAge: Int
    /// The API key's bytes, kept so the check on every `/account` read allocates nothing.
    private let apiKeyBytes: [UInt8]

    init(apiKey: Secret?, cookieSecret: [UInt8], sessionMaxAge: Int) {
        self.apiKey = apiKey
        self.cookieSecret = cookieSecret
        self.sessionMaxAge = sessionMaxAge
        apiKeyBytes = apiKey.map { Array($0.value.utf8) } ?? []
    }

    /// Whether the request carries `Authorization: Bearer <API key>` (compared in constant time).
    func hasAPIKey(_ request: Request) -> Bool {
        guard apiKey != nil, var header = request.headers["Authorization"] else { return false }
        // RFC 9110 §11.1: the scheme is case-insensitive. Compared on bytes, in place: this runs on every /account read.
        return header.withUTF8 { bytes in
            let scheme = "bearer ".utf8
            guard bytes.count > scheme.count,
                bytes.prefix(scheme.count).elementsEqual(scheme, by: { ((0x41...0x5A).contains($0) ? $0 | 0x20 : $0) == $1 })
            else { return false }
            return apiKeyBytes.withUnsafeBufferPointer { ConstantTime.equals(UnsafeBufferPointer(rebasing: bytes[scheme.count...]), $0) }
        }
    }

    /// This browser's verified session, if it sent one.
    func session(_ request: Request) -> SessionCookie? {
        request.cookies[SessionCookie.name].flatMap { SessionCookie.decode($0, secret: cookieSecret) }
    }

    /// Throws `unauthorized` unless the request may use account `id`.
    func require(_ request: Request, mayUse id: String) throws(BrokerError) {
        if request.headers["Authorization"] != nil {
            guard hasAPIKey(request) else { throw .unauthorized }
            return
        }
        guard let session = session(request), session.holds(id) else { throw .unauthorized }
    }

    /// The `Set-Cookie` value for a session.
    func sessionCookieHeader(_ session: SessionCookie, cookies: CookieHeader) -> String {
        cookies.set(SessionCookie.name, session.encode(secret: cookieSecret), path: "/", maxAge: sessionMaxAge)
    }
}
