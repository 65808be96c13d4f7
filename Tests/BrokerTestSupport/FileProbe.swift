import Foundation
import Glibc

/// Small file system probes for assertions.
public enum FileProbe {
    /// The permission bits of `path`, or nil when it does not exist.
    public static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return status.st_mode & 0o7777
    }

    /// The names in `directory`, sorted.
    public static func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    /// The bytes of `path`, or nil.
    public static func bytes(_ path: String) -> [UInt8]? {
        FileManager.default.contents(atPath: path).map { [UInt8]($0) }
    }

    /// Writes `text` to `path` without any durability care, for setting up fixtures.
    public static func plant(_ text: String, at path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
}
