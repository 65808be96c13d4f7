/// A request method the server recognises (RFC 9110 §9).
///
/// A syntactically valid method outside this set is answered 501 by the parser
/// (RFC 9112 §3: "SHOULD respond with 501").
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT
}
