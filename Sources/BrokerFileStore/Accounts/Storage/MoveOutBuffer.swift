/// Values appended in order on one thread and moved out, in the same order and once each, on another.
///
/// Start-up's decoding threads hand a chunk's compacted accounts to the loading thread this way. An array would
/// need them reversed first (so that `popLast` moves each out without a copy), a pass over the whole chunk, and each
/// `popLast` checks the array's uniqueness; here a value is moved out of its place and the place is not touched again.
final class MoveOutBuffer<Element>: @unchecked Sendable {
    // @unchecked Sendable: used by one thread at a time, handed over through a lock (``ChunkDecoding``), whose
    // release and acquire order the writes before the reads.
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    /// How many values were appended.
    private(set) var count = 0
    /// How many of them were moved out (the first `taken`).
    private var taken = 0

    /// An empty buffer with room for `capacity` values before it grows.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        (base + taken).deinitialize(count: count - taken)
        base.deallocate()
    }

    /// Appends `value`, moved in.
    func append(_ value: consuming Element) {
        precondition(taken == 0, "nothing is appended once values are moved out")
        if count == capacity {
            let grown = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: value)
        count += 1
    }

    /// Whether every value appended has been moved out.
    var isEmpty: Bool { taken == count }

    /// The next value in append order, moved out; nil when none is left.
    func next() -> Element? {
        guard taken < count else { return nil }
        taken += 1
        return (base + taken - 1).move()
    }
}
