import BrokerCore
import BrokerHTTP

#if canImport(Glibc)
import Glibc
#endif

/// Which front-end origins may call the browser-session endpoints from their own pages, with this
/// browser's cookies (`BROKER_CORS_ORIGINS`), and the CORS header fields that let them.
///
/// The Fetch standard's CORS protocol: a listed origin gets
/// `Access-Control-Allow-Origin: <that origin>` and `Access-Control-Allow-Credentials: true`
/// on every answer, and its preflight (`OPTIONS` with `Access-Control-Request-Method`) is
/// answered 204 with the methods, headers and lifetime it may use. Any other origin, and a
/// request without `Origin`, gets no CORS field, so the browser keeps the answer from the
/// page. `Vary: Origin` goes on every answer of these routes, whoever asks, so a cache never
/// hands one origin's answer to another. Origins match byte for byte in the form browsers send
/// them (RFC 6454 §6.2: lowercase scheme and host, no default port, no path).
struct CORSPolicy: Sendable {
    /// The listed origins, each as ``serialize(_:)`` made it.
    let origins: [String]

    /// Seconds a browser may reuse a preflight's answer (`Access-Control-Max-Age`).
    static let maxAge = 600
    /// Request fields a listed origin may send beyond the CORS-safelisted ones. Never `Authorization`:
    /// the API key belongs to back ends, and a page calls these routes with the browser's session cookie.
    static let allowedHeaders = "Accept, Content-Type"
    /// Response fields a page may read beyond the CORS-safelisted ones: when to try a refresh again, and the challenge of a 401.
    static let exposedHeaders = "Retry-After, WWW-Authenticate"

    /// The listed origin this request comes from, or nil when it sends no `Origin` or one not listed.
    func allowedOrigin(_ request: Request) -> String? {
        guard !origins.isEmpty, let origin = request.headers["Origin"] else { return nil }
        return origins.first { ExactKey.same($0, origin) }
    }

    /// Adds `Vary: Origin` and, for a listed origin, the fields that let its page read `response`.
    func decorate(_ response: inout Response, for request: Request) {
        // A token answer's shared fields already end with it (``OAuthHandlers/corsTokenResponse(_:)``): adding it
        // again would copy them on every read. Only the last field is looked at; a repeat elsewhere is as before.
        if !Self.endsVaryingOnOrigin(response.headers) { response.headers.add(name: "Vary", value: "Origin") }
        guard let origin = allowedOrigin(request) else { return }
        response.headers.add(name: "Access-Control-Allow-Origin", value: origin)
        response.headers.add(name: "Access-Control-Allow-Credentials", value: "true")
        response.headers.add(name: "Access-Control-Expose-Headers", value: Self.exposedHeaders)
    }

    /// Whether the last of `headers` is `Vary: Origin`, as spelled here.
    private static func endsVaryingOnOrigin(_ headers: HTTPHeaders) -> Bool {
        guard let last = headers.fields.last else { return false }
        return last.name == "Vary" && last.value == "Origin"
    }

    /// `handler` with every answer decorated (``decorate(_:for:)``), the inline path of a fast path included.
    func wrap(_ handler: Router.Handler) -> Router.Handler {
        switch handler {
        case .sync(let body):
            return .sync { request in
                var response = body(request)
                decorate(&response, for: request)
                return response
            }
        case .async(let body):
            return .async { request in
                var response = await body(request)
                decorate(&response, for: request)
                return response
            }
        case .fastPath(let fast, let slow):
            return .fastPath(
                { request in
                    guard var response = fast(request) else { return nil }
                    decorate(&response, for: request)
                    return response
                },
                otherwise: { request in
                    var response = await slow(request)
                    decorate(&response, for: request)
                    return response
                })
        case .streaming(let body, let limit):
            return .streaming(
                { request in
                    var response = await body(request)
                    decorate(&response, for: request)
                    return response
                }, maxBodyBytes: limit)
        }
    }

    /// The `OPTIONS` handler of a route serving `methods`: 204 with `Allow` (RFC 9110 §9.3.7), and for a listed
    /// origin's preflight the methods, headers and lifetime it may use; other origins get no CORS field.
    func preflight(methods: [HTTPMethod]) -> Router.Handler {
        let allowed = (methods + [.OPTIONS]).map(\.rawValue).joined(separator: ", ")
        let requestable = methods.map(\.rawValue).joined(separator: ", ")
        return .sync { request in
            var headers = HTTPHeaders([("Allow", allowed), ("Vary", "Origin")])
            if let origin = allowedOrigin(request), request.headers.contains("Access-Control-Request-Method") {
                headers.add(name: "Access-Control-Allow-Origin", value: origin)
                headers.add(name: "Access-Control-Allow-Credentials", value: "true")
                headers.add(name: "Access-Control-Allow-Methods", value: requestable)
                headers.add(name: "Access-Control-Allow-Headers", value: Self.allowedHeaders)
                headers.add(name: "Access-Control-Max-Age", value: String(Self.maxAge))
            }
            return Response(status: .noContent, headers: headers)
        }
    }

    /// `text` as the origin browsers send in `Origin`, or nil when it is not one: `scheme://host[:port]`
    /// with scheme http or https, an ASCII host name, IPv4 or bracketed IPv6 address, an optional port
    /// 1–65535, and nothing after it, not even `/`. Scheme and host are lowercased and a default port
    /// (80 for http, 443 for https) is dropped, as browsers do (RFC 6454 §6.2).
    static func serialize(_ text: String) -> String? {
        let lowered = text.lowercased()
        let scheme: String
        if lowered.hasPrefix("http://") { scheme = "http" } else if lowered.hasPrefix("https://") { scheme = "https" } else { return nil }
        let authority = lowered.dropFirst(scheme.count + 3)
        var host = Substring(authority)
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = portNumber(rest.dropFirst())
                guard port != nil else { return nil }
            }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &address) == 1 else { return nil }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                port = portNumber(authority[authority.index(after: colon)...])
                guard port != nil else { return nil }
            }
            // Letters, digits, hyphens and dots in non-empty labels: an IDN host is given in its xn-- form.
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard !host.isEmpty,
                labels.allSatisfy({ label in
                    !label.isEmpty && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
                })
            else { return nil }
        }
        let defaultPort = scheme == "http" ? 80 : 443
        return scheme + "://" + host + (port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    /// A port of 1 to 5 digits from 1 to 65535, or nil.
    private static func portNumber(_ text: Substring) -> Int? {
        guard (1...5).contains(text.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(text), (1...65535).contains(value)
        else { return nil }
        return value
    }
}
