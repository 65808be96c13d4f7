import BrokerCore

/// Account ids in byte order, for paging: sorted buckets of at most a few thousand ids each.
///
/// An insert or removal moves at most one bucket's ids (a flat sorted array of a million would move megabytes per
/// write); finding a position is a binary search over the buckets' last ids, then within one bucket. A snapshot,
/// sorted already, is appended in order at start-up without any search.
struct OrderedKeys: Sendable {
    /// Non-empty buckets, each sorted, every id of one sorting before every id of the next.
    private var buckets: [[ExactKey]] = []
    /// The number of ids.
    private(set) var count = 0
    /// A bucket grown past this is split in two.
    static let bucketLimit = 2048
    /// Appends in order fill a bucket to this, leaving room for inserts.
    private static let appendLimit = 1024

    /// Adds `key`, known to sort after every id held (the snapshot's order).
    mutating func append(_ key: ExactKey) {
        if buckets.isEmpty || buckets[buckets.count - 1].count >= Self.appendLimit {
            var bucket: [ExactKey] = []
            bucket.reserveCapacity(Self.appendLimit)
            buckets.append(bucket)
        }
        buckets[buckets.count - 1].append(key)
        count += 1
    }

    /// Adds `key` in its place; does nothing when it is held already.
    mutating func insert(_ key: ExactKey) {
        guard !buckets.isEmpty else {
            buckets = [[key]]
            count = 1
            return
        }
        // The first bucket whose last id is not below the key, or the last bucket for a key past them all.
        let bucket = min(firstBucket(notBelow: key), buckets.count - 1)
        let position = Self.lowerBound(buckets[bucket], key)
        if position < buckets[bucket].count, buckets[bucket][position] == key { return }
        buckets[bucket].insert(key, at: position)
        count += 1
        if buckets[bucket].count > Self.bucketLimit {
            let upper = Array(buckets[bucket][(Self.bucketLimit / 2)...])
            buckets[bucket].removeSubrange((Self.bucketLimit / 2)...)
            buckets.insert(upper, at: bucket + 1)
        }
    }

    /// Removes `key` when it is held.
    mutating func remove(_ key: ExactKey) {
        let bucket = firstBucket(notBelow: key)
        guard bucket < buckets.count else { return }
        let position = Self.lowerBound(buckets[bucket], key)
        guard position < buckets[bucket].count, buckets[bucket][position] == key else { return }
        buckets[bucket].remove(at: position)
        count -= 1
        if buckets[bucket].isEmpty { buckets.remove(at: bucket) }
    }

    /// Up to `limit` ids in order, starting at the first one above `after` (when given) and not below `from` (when
    /// given), and stopping at the first one that is not `while`-true.
    func ids(after: ExactKey?, from: ExactKey?, limit: Int, while holds: (ExactKey) -> Bool = { _ in true }) -> [ExactKey] {
        var (bucket, position) = (0, 0)
        if let from { (bucket, position) = self.position(of: from, strictlyAbove: false) }
        if let after {
            let next = self.position(of: after, strictlyAbove: true)
            if (next.bucket, next.position) > (bucket, position) { (bucket, position) = next }
        }
        var result: [ExactKey] = []
        result.reserveCapacity(min(limit, 1024))
        while bucket < buckets.count, result.count < limit {
            let ids = buckets[bucket]
            while position < ids.count, result.count < limit {
                guard holds(ids[position]) else { return result }
                result.append(ids[position])
                position += 1
            }
            bucket += 1
            position = 0
        }
        return result
    }

    /// Where the first id above `key` (or not below it, unless `strictlyAbove`) lies.
    private func position(of key: ExactKey, strictlyAbove: Bool) -> (bucket: Int, position: Int) {
        let bucket = firstBucket(notBelow: key)
        guard bucket < buckets.count else { return (buckets.count, 0) }
        var position = Self.lowerBound(buckets[bucket], key)
        if strictlyAbove, position < buckets[bucket].count, buckets[bucket][position] == key { position += 1 }
        return (bucket, position)
    }

    /// The index of the first bucket whose last id is not below `key` (`buckets.count` when there is none).
    private func firstBucket(notBelow key: ExactKey) -> Int {
        var low = 0
        var high = buckets.count
        while low < high {
            let middle = (low + high) / 2
            if buckets[middle][buckets[middle].count - 1] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the first id of `sorted` not below `key`.
    static func lowerBound(_ sorted: [ExactKey], _ key: ExactKey) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
