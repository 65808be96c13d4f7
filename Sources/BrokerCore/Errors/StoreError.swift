/// Why a store operation failed; messages name the operation and path, never a secret.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// I/O failed (read-only, disk full, EIO, bad input for a file name); the app answers 503 `storage_unavailable`.
    case unavailable(String)
    /// A stored record does not parse; start-up stops with this message rather than replace it.
    case corrupt(path: String, reason: String)

    /// A sentence for logs and start-up failures.
    public var description: String {
        switch self {
        case .unavailable(let message):
            return "storage unavailable: \(message)"
        case .corrupt(let path, let reason):
            return "corrupt record \(path): \(reason); fix or move the file away, nothing was overwritten"
        }
    }
}

extension StoreError {
    /// The message without the case name: the text of ``unavailable(_:)`` or the reason of ``corrupt(path:reason:)``.
    package var message: String {
        switch self {
        case .unavailable(let message): return message
        case .corrupt(let path, let reason): return "\(path): \(reason)"
        }
    }
}
