import Glibc

/// Memory an array has reserved but not yet written (its capacity past its count), by address, so that another
/// thread can have the kernel fault it in before the owner writes there.
///
/// Start-up reserves the index's arrays for every account of the snapshot at once (about 200 MiB at a million), and
/// the kernel zeroes each page at its first write: on the loading thread, a third of its time (`clear_page_erms`
/// under the moves into the index, `perf record` of 2026-12-07). The decoding threads fault in the part of these
/// arrays that the chunk they decode will fill, so the zeroing runs beside the decoding instead of in the serial part.
///
/// Faulting in (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14) never changes what the memory holds, so it is harmless
/// whenever it runs: before, during or after the owner's writes, or after the owner freed the memory (the kernel
/// then populates whatever is mapped there, or refuses with `ENOMEM`). A kernel without it refuses with `EINVAL`
/// and the owner's writes fault the pages in as before.
struct ReservedMemory: Sendable {
    /// The first byte and the byte count, as integers (the pointer itself is not `Sendable`; nothing is read or written through it).
    let address: Int
    let length: Int

    /// The memory of `array` from its count to its capacity; nil when nothing is reserved.
    static func unwritten<Element>(_ array: inout [Element]) -> ReservedMemory? {
        let (count, capacity) = (array.count, array.capacity)
        guard capacity > count else { return nil }
        let base = array.withUnsafeMutableBufferPointer { $0.baseAddress.map { Int(bitPattern: $0) } }
        guard let base else { return nil }
        let stride = MemoryLayout<Element>.stride
        return ReservedMemory(address: base + count * stride, length: (capacity - count) * stride)
    }

    /// `madvise`'s `MADV_POPULATE_WRITE` (Linux 5.14; glibc's headers may predate it).
    private static let populateWrite: Int32 = 23

    /// Faults in part `part` of `parts` equal parts, in whole pages inside the memory (a page it shares with
    /// neighbouring memory is left to the owner's writes).
    func populate(part: Int, of parts: Int) {
        guard parts > 0, part >= 0, part < parts, length > 0 else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard page > 0 else { return }
        // Multiplied before dividing: a part's bounds are exact, and the parts cover the memory once.
        let from = address + Int((Double(length) * Double(part) / Double(parts)).rounded(.down))
        let to = part == parts - 1 ? address + length : address + Int((Double(length) * Double(part + 1) / Double(parts)).rounded(.down))
        let start = max((from + page - 1) / page * page, (address + page - 1) / page * page)
        let end = min((to + page - 1) / page * page, (address + length) / page * page)
        guard end > start, let pointer = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pointer, end - start, Self.populateWrite)
    }
}
