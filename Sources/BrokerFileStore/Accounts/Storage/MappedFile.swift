import BrokerCore
import Glibc

/// A whole file mapped read-only into memory, for one pass over it; unmapped when released.
///
/// Start-up reads tens of megabytes of records once. Mapped, they cost no
/// copy and no heap: the pages belong to the page cache and leave the
/// process's memory with the mapping.
final class MappedFile: @unchecked Sendable {
    // @unchecked Sendable: the mapping is read-only and never changes until deinit.
    /// The file's bytes; empty for an empty file.
    let bytes: UnsafeRawBufferPointer

    /// Maps the file open as `descriptor` (its path names it in errors).
    init(descriptor: Int32, path: String) throws(StoreError) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .posix("stat", path) }
        let size = Int(status.st_size)
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let address = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else {
            throw .posix("map", path)
        }
        // One pass from start to end: let the kernel read ahead generously.
        _ = madvise(address, size, MADV_SEQUENTIAL)
        bytes = UnsafeRawBufferPointer(start: address, count: size)
    }

    /// Drops the pages wholly inside `range` from the process's memory; they stay in the page cache, and a later
    /// read of them maps them in again. Keeps a one-pass load's resident memory to the part still being read.
    func release(_ range: Range<Int>) {
        guard let base = bytes.baseAddress else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (range.lowerBound + page - 1) / page * page
        let end = min(range.upperBound, bytes.count) / page * page
        guard start < end else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
