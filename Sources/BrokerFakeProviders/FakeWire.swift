import BrokerCrypto
import BrokerHTTP
import Foundation

/// Reading requests and writing answers the way every fake needs: form fields, client credentials, redirects.
enum FakeWire {
    /// The form fields of a `application/x-www-form-urlencoded` body (RFC 6749 §4.1.3), first value of each name;
    /// empty for any other body, as a server that only reads forms sees a JSON one.
    static func form(_ request: Request) -> [String: String] {
        guard request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            return [:]
        }
        return firstValues(URLEncodedForm.parse(String(decoding: request.body, as: UTF8.self)))
    }

    /// The members of a JSON object body whose members are all strings; nil for any other body.
    static func jsonStrings(_ request: Request) -> [String: String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else { return nil }
        let strings = object.compactMapValues { $0 as? String }
        return strings.count == object.count ? strings : nil
    }

    /// The query's fields, first value of each name.
    static func query(_ request: Request) -> [String: String] {
        firstValues(request.queryItems)
    }

    /// Name → first value.
    static func firstValues(_ pairs: [(name: String, value: String)]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in pairs where fields[pair.name] == nil { fields[pair.name] = pair.value }
        return fields
    }

    /// The client credentials a token request carries, and whether they came as HTTP Basic.
    ///
    /// RFC 6749 §2.3.1: Basic with the form-encoded id and secret joined by `:`, or
    /// `client_id` and `client_secret` in the body; nil when neither is there.
    static func clientCredentials(_ request: Request, form: [String: String]) -> (id: String, secret: String, basic: Bool)? {
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("basic ") {
            guard let decoded = Base64.decode(String(header.dropFirst(6)).trimming(" ")),
                let text = String(validating: decoded, as: UTF8.self), let colon = text.firstIndex(of: ":"),
                let id = PercentEncoding.formDecode(String(text[..<colon])),
                let secret = PercentEncoding.formDecode(String(text[text.index(after: colon)...]))
            else {
                return ("", "", true)
            }
            return (id, secret, true)
        }
        guard let id = form["client_id"] else { return nil }
        return (id, form["client_secret"] ?? "", false)
    }

    /// The Bearer token of an `Authorization` field (RFC 6750 §2.1), if any.
    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7))
    }

    /// `uri` with `pairs` appended to its query, which it keeps (RFC 6749 §3.1.2).
    static func appendingQuery(_ uri: String, _ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return uri }
        return uri + (uri.contains("?") ? "&" : "?") + PercentEncoding.encodeForm(pairs)
    }

    /// A 302 to `location`.
    static func redirect(_ location: String) -> Response {
        Response(status: .found, headers: HTTPHeaders([("Location", location), ("Cache-Control", "no-store")]))
    }

    /// A response with `body` labelled `contentType`, and `extra` fields after it.
    static func answer(_ status: HTTPStatus, _ contentType: String, _ body: String, extra: [(String, String)] = []) -> Response {
        Response(
            status: status, headers: HTTPHeaders([(name: "Content-Type", value: contentType)] + extra.map { (name: $0.0, value: $0.1) }),
            body: Array(body.utf8))
    }

    /// `count` random bytes as lowercase hex.
    static func randomHex(_ count: Int) -> String {
        Hex.encode(SecureRandom.bytes(count))
    }
}

extension String {
    /// The string without leading and trailing `character`s.
    func trimming(_ character: Character) -> String {
        var s = Substring(self)
        while s.first == character { s.removeFirst() }
        while s.last == character { s.removeLast() }
        return String(s)
    }
}
