import BrokerHTTP

/// The broker's error body, `{"error","message"}`: a snake_case code for programs and a sentence for people. Every
/// error the broker answers has it, the transport's own refusals included (``RefusalRenderer/errorBody``).
extension Response {
    /// A response with the `{"error","message"}` body.
    static func error(_ status: HTTPStatus, code: String, message: String, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        json(status, "{\"error\":\(JSONString.quote(code)),\"message\":\(JSONString.quote(message))}", headers: headers)
    }
}

extension RefusalRenderer {
    /// The server's own refusals (a malformed or slow request, no route, no room) in the broker's error body.
    static let errorBody = RefusalRenderer { refusal in
        Response.error(refusal.status, code: refusal.code, message: refusal.message, headers: refusal.headers)
    }
}
