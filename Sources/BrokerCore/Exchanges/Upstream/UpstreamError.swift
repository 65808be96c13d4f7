/// Why an outbound request produced no usable HTTP response.
public enum UpstreamError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The provider did not answer within the outbound timeout.
    case timeout
    /// The request failed below HTTP; the message (for example `connection refused`) never holds a URL or secret.
    case transport(String)
    /// The answer's body, after any content decoding, was larger than `limit` bytes; it was cut off unread.
    case tooLarge(limit: Int)

    /// A short sentence for logs.
    public var description: String {
        switch self {
        case .timeout: "the provider did not answer in time"
        case .transport(let message): "transport error: \(message)"
        case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
        }
    }
}
