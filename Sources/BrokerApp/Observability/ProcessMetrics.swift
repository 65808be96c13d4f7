import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The broker's version, printed by `token-broker version` and exported as `broker_build_info`.
public enum BrokerVersion {
    /// The release this build is.
    public static let current = "0.1.0"
}

/// What `/metrics` says about the process itself, read from `/proc` on each scrape (Linux).
struct ProcessMetrics {
    /// When the process started, in seconds since 1970 (taken once, at first use).
    static let startTime = Date().timeIntervalSince1970

    /// Resident memory in bytes (`/proc/self/statm`, second field, in pages), or nil off Linux.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Open file descriptors (entries of `/proc/self/fd`, less the one this listing opens), or nil off Linux.
    static func openDescriptors() -> Int? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return max(0, entries.count - 1)
    }

    /// `broker_build_info`, `process_resident_memory_bytes`, `process_open_fds`, `process_start_time_seconds`.
    static func render() -> String {
        var out = "# HELP broker_build_info The broker's version; the value is always 1.\n"
        out += "# TYPE broker_build_info gauge\n"
        out += "broker_build_info{version=\"\(BrokerVersion.current)\"} 1\n"
        if let bytes = residentBytes() {
            out += MetricsRenderer.single("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", bytes)
        }
        if let descriptors = openDescriptors() {
            out += MetricsRenderer.single("process_open_fds", .gauge, "Number of open file descriptors.", descriptors)
        }
        out += MetricsRenderer.single(
            "process_start_time_seconds", .gauge,
            "Start time of the process since the Unix epoch in seconds.", Int(startTime))
        return out
    }
}
