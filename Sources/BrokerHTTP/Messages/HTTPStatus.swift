/// A response status code with its reason phrase (RFC 9110 §15).
public struct HTTPStatus: Sendable, Hashable {
    /// The three-digit code.
    public let code: Int
    /// The reason phrase sent on the status line.
    public let reason: String

    /// Creates a status from a code and reason phrase.
    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let `continue` = HTTPStatus(100, "Continue")
    public static let ok = HTTPStatus(200, "OK")
    public static let created = HTTPStatus(201, "Created")
    public static let noContent = HTTPStatus(204, "No Content")
    public static let found = HTTPStatus(302, "Found")
    public static let seeOther = HTTPStatus(303, "See Other")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let conflict = HTTPStatus(409, "Conflict")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let gone = HTTPStatus(410, "Gone")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    public static let expectationFailed = HTTPStatus(417, "Expectation Failed")
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let badGateway = HTTPStatus(502, "Bad Gateway")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let gatewayTimeout = HTTPStatus(504, "Gateway Timeout")
    public static let httpVersionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}
