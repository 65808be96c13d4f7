import Foundation
import Glibc

/// Fresh, empty directories for tests, removed when the test is done with them.
public enum TemporaryDirectory {
    /// Runs `body` with the path of a new directory under the system temporary directory, then removes it.
    @discardableResult
    public static func with<T>(_ body: (String) async throws -> T) async throws -> T {
        let path = try make()
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try await body(path)
    }

    /// A new directory removed when the current ``TestScope`` ends (never, outside one: an issue is recorded).
    public static func scoped(prefix: String = "broker-test") throws -> String {
        let path = try make(prefix: prefix)
        TestScope.required("a temporary directory")?.onEnd { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    /// Creates a new directory named `PREFIX.XXXXXX` under the system temporary directory (`mkdtemp`, mode 0700).
    public static func make(prefix: String = "broker-test") throws -> String {
        let base = NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
        var template = Array((base + "/" + prefix + ".XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw TemporaryDirectoryError(errno: errno) }
        return String(cString: created)
    }
}

/// `mkdtemp` failed.
public struct TemporaryDirectoryError: Error, CustomStringConvertible {
    /// The `errno` it set.
    public let errno: Int32
    public var description: String { "mkdtemp failed: errno \(errno)" }
}
