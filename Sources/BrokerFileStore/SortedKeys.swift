/// A set of distinct keys kept in ascending order: insert, remove and find in O(log n + c), walk in order from any key.
///
/// The keys sit in sorted chunks of at most `2 × chunkSize`, found by binary
/// search over the chunks' last keys, so an insert or a removal moves at most
/// one chunk's worth of keys instead of the whole array. Keys that arrive in
/// order (a snapshot's account ids) are appended without a search. The webhook
/// outbox's due and listing orders and the account store's id order are kept
/// this way. Value semantics; not thread-safe.
struct SortedKeys<Key: Comparable> {
    /// Non-empty, each sorted, every key of a chunk below every key of the next.
    private var chunks: [[Key]] = []
    /// How many keys are held.
    private(set) var count = 0
    /// Keys per chunk after a split.
    private let chunkSize: Int

    /// An empty set; `chunkSize` is small only in tests, to exercise splits.
    init(chunkSize: Int = 256) {
        self.chunkSize = max(2, chunkSize)
    }

    /// Whether no key is held.
    var isEmpty: Bool { count == 0 }

    /// The least key.
    var first: Key? { chunks.first?.first }

    /// Adds `key`; false when it was held already.
    @discardableResult
    mutating func insert(_ key: Key) -> Bool {
        guard !chunks.isEmpty else {
            chunks = [[key]]
            count = 1
            return true
        }
        let c = min(chunkIndex(for: key), chunks.count - 1)
        let at = Self.lowerBound(key, in: chunks[c])
        if at < chunks[c].count && chunks[c][at] == key { return false }
        chunks[c].insert(key, at: at)
        count += 1
        if chunks[c].count > 2 * chunkSize {
            let tail = Array(chunks[c][chunkSize...])
            chunks[c].removeSubrange(chunkSize...)
            chunks.insert(tail, at: c + 1)
        }
        return true
    }

    /// Adds `key`, known to be above every key held (keys arriving in order): no search, chunks filled to `chunkSize`.
    mutating func append(_ key: Key) {
        if chunks.isEmpty || chunks[chunks.count - 1].count >= chunkSize {
            var chunk: [Key] = []
            chunk.reserveCapacity(chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(key)
        count += 1
    }

    /// Removes `key`; false when it was not held.
    @discardableResult
    mutating func remove(_ key: Key) -> Bool {
        let c = chunkIndex(for: key)
        guard c < chunks.count else { return false }
        let at = Self.lowerBound(key, in: chunks[c])
        guard at < chunks[c].count, chunks[c][at] == key else { return false }
        chunks[c].remove(at: at)
        count -= 1
        if chunks[c].isEmpty { chunks.remove(at: c) }
        return true
    }

    /// Whether `key` is held.
    func contains(_ key: Key) -> Bool {
        let c = chunkIndex(for: key)
        guard c < chunks.count else { return false }
        let at = Self.lowerBound(key, in: chunks[c])
        return at < chunks[c].count && chunks[c][at] == key
    }

    /// Up to `limit` keys in ascending order, from the least (`after` nil) or from the first above `after`.
    func ascending(after: Key? = nil, limit: Int) -> [Key] {
        ascending(from: nil, after: after, limit: limit)
    }

    /// Up to `limit` keys in ascending order, starting at the first that is at least `from` and above `after` (each
    /// when given), and stopping before the first one `holds` refuses.
    func ascending(from: Key?, after: Key?, limit: Int, while holds: (Key) -> Bool = { _ in true }) -> [Key] {
        var out: [Key] = []
        guard limit > 0 else { return out }
        var (c, at) = (0, 0)
        if let from {
            c = chunkIndex(for: from)
            if c < chunks.count { at = Self.lowerBound(from, in: chunks[c]) }
        }
        if let after {
            let next = chunkIndex(for: after)
            let nextAt = next < chunks.count ? Self.upperBound(after, in: chunks[next]) : 0
            if (next, nextAt) > (c, at) { (c, at) = (next, nextAt) }
        }
        while c < chunks.count {
            let chunk = chunks[c]
            while at < chunk.count {
                guard holds(chunk[at]) else { return out }
                out.append(chunk[at])
                if out.count == limit { return out }
                at += 1
            }
            c += 1
            at = 0
        }
        return out
    }

    /// Up to `limit` keys in descending order, from the greatest (`before` nil) or from the first below `before`.
    func descending(before: Key? = nil, limit: Int) -> [Key] {
        var out: [Key] = []
        guard limit > 0, !chunks.isEmpty else { return out }
        var c = chunks.count - 1
        var at = chunks[c].count - 1
        if let before {
            c = min(chunkIndex(for: before), chunks.count - 1)
            at = Self.lowerBound(before, in: chunks[c]) - 1
        }
        while c >= 0 {
            let chunk = chunks[c]
            while at >= 0 {
                out.append(chunk[at])
                if out.count == limit { return out }
                at -= 1
            }
            c -= 1
            if c >= 0 { at = chunks[c].count - 1 }
        }
        return out
    }

    /// Calls `body` with each key in ascending order while it returns true.
    func forEachAscending(_ body: (Key) -> Bool) {
        for chunk in chunks {
            for key in chunk where !body(key) { return }
        }
    }

    /// The first chunk whose last key is at least `key`; `chunks.count` when every key is below it.
    private func chunkIndex(for key: Key) -> Int {
        var low = 0
        var high = chunks.count
        while low < high {
            let mid = (low + high) / 2
            if chunks[mid][chunks[mid].count - 1] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position in the sorted `chunk` whose key is not below `key`.
    static func lowerBound(_ key: Key, in chunk: [Key]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if chunk[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The first position in `chunk` whose key is above `key`.
    private static func upperBound(_ key: Key, in chunk: [Key]) -> Int {
        var low = 0
        var high = chunk.count
        while low < high {
            let mid = (low + high) / 2
            if key < chunk[mid] { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

extension SortedKeys: Sendable where Key: Sendable {}
