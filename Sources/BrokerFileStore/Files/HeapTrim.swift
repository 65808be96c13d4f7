import BrokerCore
import Glibc

/// Returns the free memory of the C heap to the system (glibc's `malloc_trim`), when the C library has it.
///
/// Start-up decodes every record into transient copies, and the background
/// pass that opens sealed secrets frees every envelope; glibc keeps the pages
/// of freed memory unless asked, and the process would stay larger than it needs to.
/// `malloc_trim` is not in the Glibc module map, so it is looked up by name;
/// with another C library (or none found) this does nothing.
enum HeapTrim {
    /// `int malloc_trim(size_t pad)`.
    private typealias Trim = @convention(c) (Int) -> Int32

    /// Releases free heap pages; a no-op where `malloc_trim` does not exist.
    static func releaseFreeMemory() {
        // RTLD_DEFAULT is the null handle in glibc: search the process's global symbols.
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }
}
