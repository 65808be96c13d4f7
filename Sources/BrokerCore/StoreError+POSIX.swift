import Glibc

extension StoreError {
    /// An ``unavailable(_:)`` error naming the operation, the path and the `errno` text.
    static func posix(_ operation: String, _ path: String, _ code: Int32 = errno) -> StoreError {
        .unavailable("\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))")
    }
}

extension StoreError {
    /// The message without the case name: the text of ``unavailable(_:)`` or the reason of ``corrupt(path:reason:)``.
    var message: String {
        switch self {
        case .unavailable(let message): return message
        case .corrupt(let path, let reason): return "\(path): \(reason)"
        }
    }
}
