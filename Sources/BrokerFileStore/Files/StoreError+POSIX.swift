import BrokerCore
import Glibc

extension StoreError {
    /// An ``unavailable(_:)`` error naming the operation, the path and the `errno` text.
    package static func posix(_ operation: String, _ path: String, _ code: Int32 = errno) -> StoreError {
        .unavailable("\(operation) \(path): \(String(cString: strerror(code))) (errno \(code))")
    }
}
