import Foundation
import Glibc

/// A fresh, empty directory for one test, removed when the test's body returns.
enum TemporaryDirectory {
    /// Runs `body` with the path of a new directory under the system temporary directory, then removes it.
    @discardableResult
    static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        let base = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((base + "/broker-core-test.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw StoreTestError("mkdtemp failed: errno \(errno)") }
        let path = String(cString: created)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }
}
