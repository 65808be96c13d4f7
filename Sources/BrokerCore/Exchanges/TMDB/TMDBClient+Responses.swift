import Foundation

extension TMDBClient {
    /// The JSON object of a TMDB answer, or an upstream error naming the failed check and TMDB's `status_code`.
    ///
    /// TMDB's error body is `{"status_code":33,"status_message":"…","success":false}`,
    /// sometimes `{"failure":true,…}` instead of `success:false`. The message is not
    /// repeated (house rule: no provider body is echoed); the code says enough.
    static func checkedObject(of response: UpstreamResponse, step: String) throws(BrokerError) -> [String: Any] {
        let status = response.status
        let body = ResponseBody(response.body)
        let fields = body.fields(acceptForm: false)
        guard (200..<300).contains(status) else {
            let suffix = fields.flatMap(statusCode).map { " with TMDB status_code \($0)" } ?? ""
            throw .upstreamError(step: step, reason: "HTTP \(status) (not a 2xx status)\(suffix)")
        }
        guard !body.isBlank else { throw .upstreamError(step: step, reason: "HTTP \(status) with an empty body") }
        switch body.parse(acceptForm: false) {
        case .object(let object):
            if isFalse(object["success"]) || isTrue(object["failure"]) {
                let code = statusCode(object).map { " (TMDB status_code \($0))" } ?? ""
                throw .upstreamError(step: step, reason: "HTTP \(status) with success false\(code)")
            }
            return object
        case .notAnObject, .invalidJSON:
            throw .upstreamError(step: step, reason: "the body is not a JSON object")
        case .notJSON:
            let type = ProviderValue.mediaType(response.header("Content-Type")) ?? "no content type"
            throw .upstreamError(step: step, reason: "the body is not JSON (\(type))")
        }
    }

    /// Requires `"success": true`, which every v3 authentication answer carries.
    static func requireSuccess(_ fields: [String: Any], step: String) throws(BrokerError) {
        guard isTrue(fields["success"]) else { throw .upstreamError(step: step, reason: "success is not true") }
    }

    /// TMDB's `status_code` as 1–4 digits, or nil.
    static func statusCode(_ fields: [String: Any]) -> String? {
        guard let code = fields["status_code"].flatMap(ProviderValue.identifier) else { return nil }
        return code.count <= 4 && code.allSatisfy { $0.isASCII && $0.isNumber } ? code : nil
    }

    /// Whether `value` is JSON `true`.
    static func isTrue(_ value: Any?) -> Bool {
        JSONBoolean.value(value) == true
    }

    /// Whether `value` is JSON `false`.
    static func isFalse(_ value: Any?) -> Bool {
        JSONBoolean.value(value) == false
    }
}
