import BrokerCore
import BrokerHTTP

/// The one place a core error becomes an HTTP status (house style item 3).
extension BrokerError {
    /// The status a client sees for this error.
    var status: HTTPStatus {
        switch self {
        case .unknownProvider, .notFound: return .notFound
        case .providerNotConfigured, .providerUnavailable, .storageUnavailable: return .serviceUnavailable
        case .invalidReturnTo, .invalidState, .badRequest, .invalidSetting: return .badRequest
        case .accessDenied, .insufficientPermissions, .insufficientScope: return .forbidden
        case .upstreamError: return .badGateway
        case .upstreamTimeout: return .gatewayTimeout
        case .expired, .reauthorizationRequired, .refreshExhausted, .connectSessionGone: return .gone
        case .unauthorized: return .unauthorized
        // 409, not 410: the account is still there and a verification that passes makes it usable again.
        case .notRefreshable, .ambiguousAccount, .credentialNotForwardable, .reconnectMismatch, .accountInvalid: return .conflict
        // Not 503: a damaged record stays damaged, and a 503 tells clients to come back.
        case .recordDamaged: return .internalServerError
        // RFC 9110 §15.5.21: the request was understood, but the credential it carries does not work.
        case .credentialInvalid: return HTTPStatus(code: 422) ?? .badRequest
        }
    }

    /// Whether a provider call failed or timed out: the errors a refresh backoff repeats, and that may carry `Retry-After`.
    var isUpstreamFailure: Bool {
        switch self {
        case .upstreamError, .upstreamTimeout: return true
        case .unknownProvider, .notFound, .providerNotConfigured, .providerUnavailable, .storageUnavailable, .invalidReturnTo,
            .invalidState,
            .badRequest, .accessDenied, .expired, .reauthorizationRequired, .refreshExhausted, .notRefreshable, .unauthorized,
            .recordDamaged, .ambiguousAccount, .credentialNotForwardable, .connectSessionGone, .reconnectMismatch, .insufficientPermissions,
            .insufficientScope, .credentialInvalid, .invalidSetting, .accountInvalid:
            return false
        }
    }

    /// The JSON error response, with `Cache-Control: no-store` like every broker answer.
    var response: Response {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "no-store")
        if case .unauthorized = self { headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"token-broker\"") }
        return Response.error(status, code: code, message: message, headers: headers)
    }
}
