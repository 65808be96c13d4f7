/// Why an outbound request produced no usable HTTP response.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider did not answer within the outbound timeout.
    case timeout
    /// No connection to the provider could be made within the outbound timeout; callers treat it as ``timeout``.
    case connectTimeout
    /// The request failed below HTTP for `cause`; the message (for example `connection refused`) never holds a URL or secret.
    case transport(UpstreamCause, String)
    /// The answer's body, after any content decoding, was larger than `limit` bytes; it was cut off unread.
    case tooLarge(limit: Int)

    /// The cause, as logs and `/metrics` name it.
    public var cause: UpstreamCause {
        switch self {
        case .timeout: .deadline
        case .connectTimeout: .connectTimeout
        case .transport(let cause, _): cause
        case .tooLarge: .tooLarge
        }
    }

    /// A short sentence for logs.
    public var description: String {
        switch self {
        case .timeout: "the provider did not answer in time"
        case .connectTimeout: "no connection to the provider in time"
        case .transport(_, let message): "transport error: \(message)"
        case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
        }
    }
}
