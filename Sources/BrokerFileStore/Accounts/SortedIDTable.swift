import BrokerCore

/// An exact-id hash table over the ids of a snapshot's sorted slots (``AccountIndex``): open addressing with linear
/// probing, each entry a slot number, so a read finds its account with one hash and, usually, one comparison instead
/// of a binary search of about twenty steps over a million ids (387 instructions per `GET /account` at 10,000).
///
/// The sorted slots' ids never change once start-up has loaded them (a removed account leaves its id in its slot,
/// vacant; a new id goes after them), so the table stays exact through every write and deletion without being
/// touched: the index checks a found slot for vacancy as the binary search's caller did. It is built after start-up
/// (``AccountIndex/idTableHashes(from:count:seed:)`` under the index's lock a slice at a time, the inserts outside it;
/// ``JSONFileAccountRepository/buildIDTable()``), so it costs start-up nothing; until it is there, the binary search
/// answers. 4 bytes an entry, at most half of them used: 8 to 16 bytes an account (8 MiB at a million).
///
/// The hash is seeded per table from the system's random source. Ids come from providers, so a set of them could be
/// chosen to collide: a build whose longest probe exceeds ``probeLimit`` is dropped (the binary search stays), and a
/// lookup probes at most as far as the longest probe of the build, so an absent id costs a bounded number of steps too.
final class SortedIDTable: Sendable {
    /// The longest probe a build accepts.
    static let probeLimit = 64

    /// How many ids the table holds (the index's sorted slots when it was built).
    let count: Int
    /// The hash's seed.
    let seed: UInt64
    /// Entry `i` holds a slot number plus one, or zero when empty; ``mask`` + 1 of them, a power of two. Held here
    /// rather than as an array, so that a lookup neither retains nor checks it (the table is immutable once built).
    private nonisolated(unsafe) let entries: UnsafeMutablePointer<UInt32>
    private let mask: Int
    /// The longest distance from an id's home entry to its entry.
    private let longestProbe: Int

    private init(count: Int, seed: UInt64, entries: [UInt32], longestProbe: Int) {
        self.count = count
        self.seed = seed
        self.longestProbe = longestProbe
        mask = entries.count - 1
        self.entries = .allocate(capacity: entries.count)
        self.entries.initialize(from: entries, count: entries.count)
    }

    deinit {
        entries.deallocate()
    }

    /// The hash of an id's bytes: eight bytes at a time, each word mixed in by a multiply (the constants are
    /// SplitMix64's), then a finishing mix so the low bits, which pick the entry, depend on every byte.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>, seed: UInt64) -> UInt64 {
        var h = seed ^ UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        guard let base = bytes.baseAddress else { return mix(h) }
        let raw = UnsafeRawPointer(base)
        var i = 0
        while i + 8 <= bytes.count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
            i += 8
        }
        if i < bytes.count {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < bytes.count {
                tail |= UInt64(base[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ tail) &* 0xBF58_476D_1CE4_E5B9
            h ^= h >> 29
        }
        return mix(h)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h >> 32
        h &*= 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        return h
    }

    /// Fills a table: slots are added in any order (each id once), their hashes computed by the caller.
    struct Builder {
        let count: Int
        let seed: UInt64
        private var entries: [UInt32]
        private var longestProbe = 0
        private let limit: Int
        /// How many slots were added.
        private(set) var added = 0

        /// A builder for `count` ids hashed with `seed`, refusing a probe longer than `probeLimit`.
        init(count: Int, seed: UInt64 = .random(in: .min ... .max), probeLimit: Int = SortedIDTable.probeLimit) {
            precondition(count >= 0 && count < Int(UInt32.max), "SortedIDTable: too many ids")
            self.count = count
            self.seed = seed
            limit = probeLimit
            // At least twice as many entries as ids: linear probing stays short at a load of one half or less.
            var size = 8
            while size < 2 * count { size <<= 1 }
            entries = [UInt32](repeating: 0, count: size)
        }

        /// Adds the slots `firstSlot...` whose ids hash to `hashes` (with this builder's seed); false when a probe
        /// went beyond the limit (the table is then not to be used).
        mutating func add(hashes: [UInt64], firstSlot: Int) -> Bool {
            precondition(firstSlot >= 0 && firstSlot + hashes.count <= count, "SortedIDTable: slots beyond the count")
            let mask = entries.count - 1
            let limit = limit
            var longest = longestProbe
            let fitted = entries.withUnsafeMutableBufferPointer { entries -> Bool in
                for (offset, hash) in hashes.enumerated() {
                    var i = Int(truncatingIfNeeded: hash) & mask
                    var distance = 0
                    while entries[i] != 0 {
                        distance += 1
                        if distance > limit { return false }
                        i = (i + 1) & mask
                    }
                    entries[i] = UInt32(truncatingIfNeeded: firstSlot + offset + 1)
                    longest = max(longest, distance)
                }
                return true
            }
            longestProbe = longest
            added += hashes.count
            return fitted
        }

        /// The table, once every slot was added.
        func finish() -> SortedIDTable {
            precondition(added == count, "SortedIDTable: not every slot was added")
            return SortedIDTable(count: count, seed: seed, entries: entries, longestProbe: longestProbe)
        }
    }

    /// The slot whose id is `target`'s bytes, among `keys` (the index's sorted slots' ids, at least ``count``), or
    /// nil when no sorted slot holds it.
    @inline(__always)
    func position(of target: UnsafeBufferPointer<UInt8>, keys: UnsafeBufferPointer<ExactKey>) -> Int? {
        position(of: target) { KeyOrder.compare(target, keys[$0]) == 0 }
    }

    /// The slot among those whose id hashes as `target`'s for which `holds` says its id is `target`'s bytes, or nil.
    @inline(__always)
    func position(of target: UnsafeBufferPointer<UInt8>, where holds: (Int) -> Bool) -> Int? {
        let hash = Self.hash(target, seed: seed)
        var i = Int(truncatingIfNeeded: hash) & mask
        for _ in 0...longestProbe {
            let entry = entries[i]
            if entry == 0 { return nil }
            // At a load of one half or less, the first id compared is usually the one: compared in full at once.
            let slot = Int(entry) - 1
            if holds(slot) { return slot }
            i = (i + 1) & mask
        }
        return nil
    }
}
