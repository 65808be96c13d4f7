import Foundation

extension OAuth1Client {
    /// The fields of a token answer, form-encoded whatever its label (Twitter says `text/html;charset=utf-8`).
    ///
    /// RFC 5849 §2.1 and §2.3 specify `application/x-www-form-urlencoded`; a JSON
    /// object is read too. Checks, each named when it fails: a 2xx status, a body,
    /// a form or JSON object, and no error in it.
    static func formFields(of response: UpstreamResponse, step: String) throws(BrokerError) -> [String: String] {
        let fields = try checkedObject(of: response, step: step, acceptForm: true)
        return fields.compactMapValues { ProviderValue.identifier($0) ?? ($0 as? String) }
    }

    /// The JSON object of a resource answer such as `verify_credentials`, after the same checks.
    static func jsonObject(of response: UpstreamResponse, step: String) throws(BrokerError) -> [String: Any] {
        try checkedObject(of: response, step: step, acceptForm: false)
    }

    /// Runs the status, body, shape and error checks and returns the body's fields.
    private static func checkedObject(of response: UpstreamResponse, step: String, acceptForm: Bool) throws(BrokerError) -> [String: Any] {
        guard (200..<300).contains(response.status) else {
            let suffix = errorSummary(of: response.body).map { " with \($0)" } ?? ""
            throw .upstreamError(step: step, reason: "HTTP \(response.status) (not a 2xx status)\(suffix)")
        }
        let body = ResponseBody(response.body)
        guard !body.isBlank else { throw .upstreamError(step: step, reason: "HTTP \(response.status) with an empty body") }
        switch body.parse(acceptForm: acceptForm) {
        case .object(let fields):
            if let summary = errorSummary(of: response.body) {
                throw .upstreamError(step: step, reason: "HTTP \(response.status) with \(summary)")
            }
            return fields
        case .notAnObject, .invalidJSON:
            throw .upstreamError(
                step: step, reason: acceptForm ? "the body is neither form-encoded nor a JSON object" : "the body is not a JSON object")
        case .notJSON:
            let type = ProviderValue.mediaType(response.header("Content-Type")) ?? "no content type"
            throw .upstreamError(
                step: step, reason: acceptForm ? "the body is not form-encoded (\(type))" : "the body is not JSON (\(type))")
        }
    }

    /// What an error body may show: Twitter's numeric code (JSON `errors` or XML `<error code>`),
    /// an `oauth_problem` name (OAuth Problem Reporting), or an OAuth 2.0-style `error`; nil when none.
    ///
    /// Messages are never shown: Twitter's plain-text 401s and XML bodies can echo request details.
    static func errorSummary(of bytes: [UInt8]) -> String? {
        let body = ResponseBody(bytes)
        if let fields = body.fields(acceptForm: true) {
            if let errors = fields["errors"] as? [Any] {
                let code = errors.lazy.compactMap { ($0 as? [String: Any])?["code"] }.compactMap(ProviderValue.identifier).first
                return code.flatMap(plainCode).map { "error code \($0)" } ?? "an errors field"
            }
            if let problem = fields["oauth_problem"] as? String {
                return isPlainName(problem) ? "oauth_problem \(problem)" : "an oauth_problem field"
            }
            if let summary = ProviderErrorSummary(fields: fields) { return summary.description }
        }
        // `<errors><error code="415">…</error></errors>`, as request_token answers a callback it does not allow.
        let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
        if let marker = text.range(of: "<error code=\"") {
            let digits = String(text[marker.upperBound...].prefix { $0.isASCII && $0.isNumber })
            return plainCode(digits).map { "error code \($0)" } ?? "an XML error"
        }
        return nil
    }

    /// `code` when it is 1–6 ASCII digits.
    private static func plainCode(_ code: String) -> String? {
        !code.isEmpty && code.count <= 6 && code.allSatisfy { $0.isASCII && $0.isNumber } ? code : nil
    }

    /// Whether `name` is 1–40 of `a-z`, `A-Z` and `_`, safe to repeat in a message.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 40 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0 == "_") }
    }
}
