import BrokerCore

/// Where the latest record of every account lies: a snapshot's records in id order, and the changes since in a table.
///
/// Start-up reads a snapshot whose records are sorted by id, so their
/// locations go into flat arrays in that order and are found by binary search,
/// not hashed one by one into a table of a million entries. Journal lines and
/// writes after that change single accounts; those go into ``changed``. A
/// compaction writes the merged order into a new snapshot and starts again
/// from its locations. Value semantics: a compaction or a backup captures a
/// copy while appends go on.
struct RecordLocations: Sendable {
    /// The ids of the sorted part, ascending.
    private var sortedKeys: [ExactKey] = []
    /// The offset of each record of the sorted part.
    private var sortedOffsets: [Int] = []
    /// The length of each record of the sorted part.
    private var sortedLengths: [UInt32] = []
    /// The file holding every record of the sorted part.
    private var sortedFile: UInt32 = 0
    /// Each account changed since the sorted part was read: its location, or nil when it was removed.
    private var changed: [ExactKey: RecordLocation?] = [:]
    /// How many accounts have a location.
    private(set) var count = 0

    /// No account anywhere.
    init() {}

    /// Empty, ready for about `capacity` records of `file` appended in id order with ``appendSorted(_:offset:length:)``.
    init(file: UInt32, capacity: Int) {
        sortedFile = file
        sortedKeys.reserveCapacity(capacity)
        sortedOffsets.reserveCapacity(capacity)
        sortedLengths.reserveCapacity(capacity)
    }

    /// Adds the record of `key` in the sorted part's file; `key` sorts after every id appended so far and nothing has
    /// changed yet (``appendSorted(_:offset:length:)`` is for reading one snapshot).
    mutating func appendSorted(_ key: ExactKey, offset: Int, length: UInt32) {
        sortedKeys.append(key)
        sortedOffsets.append(offset)
        sortedLengths.append(length)
        count += 1
    }

    /// The memory reserved for the sorted part's records still to come, for start-up's decoding threads to fault in
    /// ahead of the loading thread (``ReservedMemory``).
    mutating func unwrittenMemory() -> [ReservedMemory] {
        [ReservedMemory.unwritten(&sortedKeys), ReservedMemory.unwritten(&sortedOffsets), ReservedMemory.unwritten(&sortedLengths)]
            .compactMap { $0 }
    }

    /// The sorted part's records, read from `file` (the snapshot they were read from), sharing this value's arrays.
    func snapshotRecords(in file: AccountStoreFile) -> SnapshotRecords {
        precondition(file.number == sortedFile, "the sorted part lies in another file")
        return SnapshotRecords(file: file, keys: sortedKeys, offsets: sortedOffsets, lengths: sortedLengths)
    }

    /// The last id of the sorted part, to check that the next one sorts after it.
    var lastSorted: ExactKey? { sortedKeys.last }

    /// The location of the latest record of `key`, nil when the account has none.
    subscript(key: ExactKey) -> RecordLocation? {
        get {
            if !changed.isEmpty, let change = changed[key] { return change }
            guard let position = KeyOrder.position(of: key, in: sortedKeys, count: sortedKeys.count) else { return nil }
            return RecordLocation(file: sortedFile, length: sortedLengths[position], offset: sortedOffsets[position])
        }
        set {
            let before = self[key]
            if before == nil && newValue != nil { count += 1 }
            if before != nil && newValue == nil { count -= 1 }
            changed.updateValue(newValue, forKey: key)
        }
    }

    /// Every account with a location, in id order (the sorted part merged with the changes).
    func ordered() -> [(key: ExactKey, location: RecordLocation)] {
        var result: [(key: ExactKey, location: RecordLocation)] = []
        result.reserveCapacity(count)
        let changes = changed.keys.sorted { KeyOrder.compare($0, $1) < 0 }
        var next = 0
        for position in sortedKeys.indices {
            let key = sortedKeys[position]
            while next < changes.count, KeyOrder.compare(changes[next], key) < 0 {
                if let location = changed[changes[next]]! { result.append((changes[next], location)) }
                next += 1
            }
            if next < changes.count, KeyOrder.compare(changes[next], key) == 0 {
                if let location = changed[changes[next]]! { result.append((key, location)) }
                next += 1
                continue
            }
            result.append((key, RecordLocation(file: sortedFile, length: sortedLengths[position], offset: sortedOffsets[position])))
        }
        for change in changes[next...] {
            if let location = changed[change]! { result.append((change, location)) }
        }
        return result
    }

    /// `written` (the locations of a snapshot written from `captured`, an earlier copy of this) with every account
    /// changed here since that copy kept where it is now.
    func rebased(on written: RecordLocations, capturedAs captured: RecordLocations) -> RecordLocations {
        var rebased = written
        for key in changed.keys {
            let now = self[key]
            if now != captured[key] { rebased[key] = now }
        }
        return rebased
    }
}
