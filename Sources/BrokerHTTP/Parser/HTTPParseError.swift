/// Why a request could not be framed; every case is answered and then the connection closes.
///
/// RFC 9112 and RFC 9110 give the status for each case.
public struct HTTPParseError: Error, Sendable, Equatable {
    /// The status the server answers with.
    public let status: HTTPStatus
    /// The snake_case code naming the error.
    public let code: String
    /// A short human sentence; never echoes request bytes.
    public let message: String

    /// Creates an error with its status, code and message.
    public init(status: HTTPStatus, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// 400: the request is malformed; `message` says which rule it broke.
    public static func badRequest(_ message: String) -> HTTPParseError {
        HTTPParseError(status: .badRequest, code: "bad_request", message: message)
    }
    /// 414: the request-target is longer than the limit (RFC 9112 §3).
    public static let uriTooLong = HTTPParseError(
        status: .uriTooLong, code: "uri_too_long", message: "The request target is too long.")
    /// 431: the header section is larger or has more fields than the limit (RFC 6585 §5).
    public static let headersTooLarge = HTTPParseError(
        status: .headerFieldsTooLarge, code: "headers_too_large", message: "The request header section is too large.")
    /// 413: the body is, or announces to be, larger than the limit (RFC 9110 §15.5.14).
    public static let contentTooLarge = HTTPParseError(
        status: .contentTooLarge, code: "payload_too_large", message: "The request body is too large.")
    /// 501: a method or transfer coding the server does not implement.
    public static func notImplemented(_ message: String) -> HTTPParseError {
        HTTPParseError(status: .notImplemented, code: "not_implemented", message: message)
    }
    /// 505: HTTP major version other than 1 (RFC 9112 §2.3).
    public static let versionNotSupported = HTTPParseError(
        status: .httpVersionNotSupported, code: "http_version_not_supported",
        message: "Only HTTP/1.0 and HTTP/1.1 are supported.")
    /// 417: an expectation other than 100-continue (RFC 9110 §10.1.1).
    public static let expectationFailed = HTTPParseError(
        status: .expectationFailed, code: "expectation_failed", message: "Only the 100-continue expectation is supported.")
}

extension HTTPParseError {
    /// An upstream's response is malformed (the response mode of the parser); the connection is closed.
    public static func badResponse(_ message: String) -> HTTPParseError {
        HTTPParseError(status: .badGateway, code: "bad_response", message: message)
    }
}
