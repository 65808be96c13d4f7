#if FUZZING
@testable import BrokerCore

/// A provider's HTTP answer built from one fuzz input: status, Content-Type and `Retry-After` from one byte, then the body.
///
/// The parameter byte `p` is read in mixed radix: the status is `statuses[p % 8]`,
/// the Content-Type `contentTypes[(p / 8) % 6]` and the `Retry-After` choice
/// `(p / 48) % 5`. When that choice is ``RetryAfterSource/firstLine``, the
/// payload's first line is the header's value and the rest is the body, so the
/// fuzzer reaches the field parser with any text.
struct ProviderAnswer {
    /// Where the `Retry-After` field comes from, if anywhere.
    enum RetryAfterSource: Int, CaseIterable {
        /// No `Retry-After` field.
        case none
        /// The payload's first line (up to CR or LF); the body is what follows the first LF.
        case firstLine
        /// `120`: two minutes, in delay-seconds.
        case seconds
        /// An IMF-fixdate in the past (RFC 9110 §5.6.7's example).
        case pastDate
        /// An IMF-fixdate at the end of year 9999.
        case farDate

        /// The fixed value of this source, nil for none and for the payload's line.
        var fixedValue: String? {
            switch self {
            case .none, .firstLine: nil
            case .seconds: "120"
            case .pastDate: "Sun, 06 Nov 1994 08:49:37 GMT"
            case .farDate: "Fri, 31 Dec 9999 23:59:59 GMT"
            }
        }
    }

    /// Statuses a provider answer may carry: success, the refusals RFC 6749 §5.2 names, rate limiting, server trouble.
    static let statuses = [200, 201, 204, 400, 401, 429, 500, 503]
    /// Content-Types a provider answer may carry (nil: none), true labels and the wrong ones providers use.
    static let contentTypes: [String?] = [
        "application/json; charset=utf-8", "application/json", "application/x-www-form-urlencoded",
        "text/html;charset=utf-8", "text/plain;charset=UTF-8", nil,
    ]

    /// The answer the fake provider gives to every request.
    let response: UpstreamResponse
    /// The payload as text: what the provider spelled out, which an error may name without leaking.
    let payloadText: String

    /// Builds the answer from the parameter byte and the payload.
    init(parameter: UInt8, payload: [UInt8]) {
        let p = Int(parameter)
        let status = Self.statuses[p % Self.statuses.count]
        let type = Self.contentTypes[(p / Self.statuses.count) % Self.contentTypes.count]
        let source =
            RetryAfterSource(rawValue: (p / (Self.statuses.count * Self.contentTypes.count)) % RetryAfterSource.allCases.count) ?? .none
        var headers: [(String, String)] = type.map { [("Content-Type", $0)] } ?? []
        var body = payload
        if source == .firstLine {
            let line = payload.prefix { $0 != 0x0A && $0 != 0x0D }
            headers.append(("Retry-After", String(decoding: line, as: UTF8.self)))
            body = payload.firstIndex(of: 0x0A).map { Array(payload[($0 + 1)...]) } ?? []
        } else if let value = source.fixedValue {
            headers.append(("Retry-After", value))
        }
        response = UpstreamResponse(status: status, headers: headers, body: body)
        payloadText = String(decoding: payload, as: UTF8.self)
    }

    /// The parameter byte for `status`, `contentType` and `retryAfter` (what the seed writer stores).
    static func parameter(status: Int, contentType: String?, retryAfter: RetryAfterSource = .none) -> UInt8 {
        guard let s = statuses.firstIndex(of: status), let t = contentTypes.firstIndex(where: { $0 == contentType }) else {
            fatalError("FuzzProviders: no parameter for status \(status) and Content-Type \(contentType ?? "none")")
        }
        return UInt8(s + statuses.count * (t + contentTypes.count * retryAfter.rawValue))
    }
}

/// The provider on the internet, played by one fixed answer: every request gets `response`, whatever it asks.
struct FixedAnswerUpstream: UpstreamClient {
    /// The answer to every request.
    let response: UpstreamResponse

    /// Returns ``response``.
    func send(_ request: UpstreamRequest) async throws(UpstreamError) -> UpstreamResponse {
        response
    }
}
#endif
