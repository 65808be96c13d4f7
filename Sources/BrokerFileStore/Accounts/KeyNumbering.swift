import BrokerCore

/// Numbers ids (end users' ids at start-up) in order of first appearance: 0 for the first, 1 for the next new one, …
///
/// ``AccountIndex/finishSorted(threads:)`` looks up the end user of every account once; with `[ExactKey: Int32]`
/// each lookup set up a SipHash `Hasher`, fed it the bytes and probed the dictionary's buckets, comparing ids
/// (`Dictionary.find` 6.4 %, `Hasher` 3.5 % of a million-account start's samples, all after the last record was
/// decoded). Here an id's bytes are mixed a word at a time into 64 bits, and the table is one flat array of 8-byte
/// entries, open addressing with linear probing: each entry holds 32 bits of the id's hash beside its number, so a
/// probe compares ids only when those bits agree (about once per lookup).
///
/// The mix starts from a seed drawn at random per table, so which ids share a bucket cannot be known in advance: end
/// users' ids come from API callers, and ids chosen to collide could otherwise make start-up quadratic. (It is not a
/// keyed pseudo-random function like SipHash; the worst an attacker who learnt a seed could do is slow one start-up.)
struct KeyNumbering {
    /// The ids numbered so far; an id's number is its position.
    private(set) var keys: [ExactKey] = []
    /// Each id's full hash, for moving it when the table grows.
    private var hashes: [UInt64] = []
    /// Zero for an empty place, else the high 32 bits of the id's hash above its number plus one.
    private var table: [UInt64]
    private var mask: Int
    private let seed: UInt64

    /// A table sized for about `expected` ids (it grows past that).
    init(expected: Int, seed: UInt64 = UInt64.random(in: .min ... .max)) {
        var capacity = 16
        while capacity < 2 * expected { capacity *= 2 }
        table = [UInt64](repeating: 0, count: capacity)
        mask = capacity - 1
        self.seed = seed
        keys.reserveCapacity(expected)
        hashes.reserveCapacity(expected)
    }

    /// How many ids are numbered.
    var count: Int { keys.count }

    /// The number of `key`, and whether this call gave it (the id was new).
    mutating func number(of key: ExactKey) -> (number: Int32, isNew: Bool) {
        let hash = Self.hash(key, seed: seed)
        let tag = hash & 0xFFFF_FFFF_0000_0000
        var place = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = table[place]
            if entry == 0 { break }
            if entry & 0xFFFF_FFFF_0000_0000 == tag {
                let number = Int(entry & 0xFFFF_FFFF) - 1
                if keys[number] == key { return (Int32(number), false) }
            }
            place = (place + 1) & mask
        }
        let number = keys.count
        keys.append(key)
        hashes.append(hash)
        table[place] = tag | UInt64(number + 1)
        // At most half full, so a probe ends soon at an empty place.
        if 2 * keys.count > table.count { grow() }
        return (Int32(number), true)
    }

    /// Doubles the table and places every id again.
    private mutating func grow() {
        table = [UInt64](repeating: 0, count: table.count * 2)
        mask = table.count - 1
        for (number, hash) in hashes.enumerated() {
            var place = Int(truncatingIfNeeded: hash) & mask
            while table[place] != 0 { place = (place + 1) & mask }
            table[place] = hash & 0xFFFF_FFFF_0000_0000 | UInt64(number + 1)
        }
    }

    /// The bytes of `key` mixed into 64 bits under `seed`: eight bytes at a time, each step a multiply and shifts
    /// (the finalizer of SplitMix64), the length mixed in first so that ids differing only in trailing zero bytes differ.
    static func hash(_ key: ExactKey, seed: UInt64) -> UInt64 {
        var string = key.string
        return string.withUTF8 { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var hash = mix(seed ^ UInt64(raw.count))
            var offset = 0
            while raw.count - offset >= 8 {
                hash = mix(hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            if offset < raw.count {
                var tail: UInt64 = 0
                for index in offset..<raw.count { tail |= UInt64(raw[index]) << (8 * (index - offset)) }
                hash = mix(hash ^ tail)
            }
            return hash
        }
    }

    /// SplitMix64's finalizer: every input bit moves every output bit.
    private static func mix(_ value: UInt64) -> UInt64 {
        var mixed = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
