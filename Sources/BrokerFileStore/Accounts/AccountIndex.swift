import BrokerCore
import Dispatch
import Foundation
import Glibc

extension Array where Element == ExactKey {
    /// Inserts `key` at `position` (its place in this sorted array) unless it is there already.
    fileprivate mutating func insertIfAbsent(_ key: ExactKey, at position: Int) {
        if position == count || self[position] != key { insert(key, at: position) }
    }
}

/// What an index slot keeps of an account whose secrets are still sealed.
enum SealedEntry: Sendable {
    /// The envelopes, decoded from a journal line or a write.
    case secrets(SealedSecrets)
    /// Nothing: they lie undecoded in the snapshot start-up read (``AccountIndex/snapshotRecords``).
    case inSnapshot
}

/// An account as the index holds it: complete, or its readable part with where its sealed secrets are.
struct IndexedAccount: Sendable {
    /// Where the secrets of an account not opened yet are.
    enum Sealed: Sendable {
        /// Decoded, in memory.
        case secrets(SealedSecrets)
        /// In the record of the snapshot start-up read, read again when opened.
        case snapshot(SnapshotRecords)
    }

    /// The account; while ``sealed`` is set, its secrets are empty placeholders and it is never handed out.
    let account: Account
    /// The secrets still to decrypt, or nil when ``account`` is complete.
    let sealed: Sealed?
}

/// The file store's memory: every account by id, and the secrets of those not opened yet.
///
/// Accounts sit inline in one array. The first ``sortedCount`` slots hold a
/// snapshot's accounts in id order, as start-up read them, and are found by
/// binary search over their ids: a million hash inserts on one thread were a
/// large share of start-up. Accounts added later sit after them, found by id
/// in a dictionary, and a removal there moves the last account into the gap.
/// A removed snapshot account leaves its slot vacant (its id stays, for the
/// search) until the same id is stored again. The sealed secrets wait in a
/// parallel array, which the background pass empties (and releases) soon after
/// start-up; those of a snapshot's records are not even decoded until then,
/// only marked, and read again from the snapshot when opened. For paging, the ids are also kept in byte order (``SortedKeys``),
/// and by end user.
struct AccountIndex: Sendable {
    /// How many leading slots hold a snapshot's accounts in id order (``appendSorted(_:sealed:key:)``).
    private var sortedCount = 0
    /// The slot of every account stored after those, by id.
    /// Keyed by exact bytes: two spellings of one name that Swift calls equal are two accounts.
    private var slots: [ExactKey: Int] = [:]
    /// Sorted slots whose account was removed; each holds a placeholder until its id is stored again.
    private var vacant: Set<Int> = []
    /// The id of the account in each slot.
    private var keys: [ExactKey] = []
    /// The first 16 bytes of each sorted slot's id (``sortedCount`` of them), which the binary search compares.
    private var prefixes: [KeyOrder.Prefix] = []
    /// The sorted slots by id (``SortedIDTable``) once built after start-up; until then the binary search finds them.
    private var idTable: SortedIDTable?
    /// ``idTable``, unretained: a read borrows the table through it without counting a reference (copying the
    /// optional reference out cost about 200 instructions a read, retain and release through outlined copies).
    private var idTableReference: Unmanaged<SortedIDTable>?
    /// The account in each slot, compacted; while ``sealed`` holds secrets for the slot, its secrets are empty placeholders.
    private var accounts: [CompactAccount] = []
    /// The secrets still sealed, by slot while any account is sealed, else empty (and released).
    private var sealed: [SealedEntry?] = []
    /// The snapshot whose records hold the secrets of the slots marked ``SealedEntry/inSnapshot``.
    private(set) var snapshotRecords: SnapshotRecords?
    /// How many slots of ``sealed`` hold secrets; when none does, ``sealed`` is empty.
    private var sealedCount = 0
    /// The accounts counted by status, kept with every change.
    private var tally = AccountStatusTally()
    /// Every id in byte order.
    private var ordered = SortedKeys<ExactKey>()
    /// The ids of each end user's accounts, in byte order (accounts without an end user are not here).
    private var byEndUser: [ExactKey: [ExactKey]] = [:]
    /// The slots given a memo (``keepMemo(_:for:)``) in the order given, a ring of at most ``memoCapacity``: when it
    /// is full, the oldest slot's memo is dropped, so that memos are bounded whatever the store's size. (A slot
    /// whose account moved or was written since may lose a newer memo that way: a memo is only ever a cache.)
    private var memoSlots: [Int] = []
    private var memoNext = 0
    /// How many accounts keep a memo at most.
    private let memoCapacity: Int
    static let defaultMemoCapacity = 16_384

    /// What a vacant slot holds: no secrets, nothing retained.
    private static let placeholder = CompactAccount(
        Account(
            provider: "", uid: "", accessToken: Secret(""), createdAt: Date(timeIntervalSince1970: 0),
            updatedAt: Date(timeIntervalSince1970: 0)))

    /// An empty index with room for about `capacity` accounts.
    init(capacity: Int = 0, memoCapacity: Int = AccountIndex.defaultMemoCapacity) {
        self.memoCapacity = memoCapacity
        keys.reserveCapacity(capacity)
        prefixes.reserveCapacity(capacity)
        accounts.reserveCapacity(capacity)
        // A large store fills hundreds of MiB of accounts at once: with transparent huge pages (where the system
        // allows them on request) that is one page fault per 2 MiB instead of one per 4 KiB.
        if capacity >= 1 << 16 {
            accounts.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                let page = Int(sysconf(Int32(_SC_PAGESIZE)))
                let start = (Int(bitPattern: base) + page - 1) / page * page
                let end = (Int(bitPattern: base) + capacity * MemoryLayout<CompactAccount>.stride) / page * page
                guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
                _ = madvise(address, end - start, MADV_HUGEPAGE)
            }
        }
    }

    /// How many accounts are held.
    var count: Int { accounts.count - vacant.count }

    /// The slot of the account `key`, if there is one.
    private func slot(of key: ExactKey) -> Int? {
        if let slot = sortedSlot(of: key) {
            return vacant.isEmpty || !vacant.contains(slot) ? slot : nil
        }
        return slots.isEmpty ? nil : slots[key]
    }

    /// The sorted slot whose id is `key`, vacant or not: by the id table once built, else by binary search.
    private func sortedSlot(of key: ExactKey) -> Int? {
        guard let idTableReference else { return KeyOrder.position(of: key, in: keys, prefixes: prefixes, count: sortedCount) }
        var target = key.string
        // ``idTable`` keeps the table alive for as long as this index holds the reference.
        return target.withUTF8 { target in
            keys.withUnsafeBufferPointer { keys in
                idTableReference._withUnsafeGuaranteedRef { $0.position(of: target, keys: keys) }
            }
        }
    }

    /// How many sorted slots there are (the ids an id table is built over).
    var sortedIDCount: Int { sortedCount }

    /// Whether the id table is in use.
    var hasIDTable: Bool { idTableReference != nil }

    /// The ``SortedIDTable/hash(_:seed:)`` of the ids of sorted slots `start..<start + count`, for a table's build.
    func idTableHashes(from start: Int, count: Int, seed: UInt64) -> [UInt64] {
        precondition(start >= 0 && count >= 0 && start + count <= sortedCount, "AccountIndex: slots beyond the sorted ones")
        return keys[start..<start + count].map { key in
            var id = key.string
            return id.withUTF8 { SortedIDTable.hash($0, seed: seed) }
        }
    }

    /// Uses `table`, built over this index's sorted slots (their ids never change, so it stays exact).
    mutating func install(_ table: SortedIDTable) {
        precondition(table.count == sortedCount, "AccountIndex: an id table of another index")
        idTable = table
        idTableReference = Unmanaged.passUnretained(table)
    }

    /// Builds the id table at once (``JSONFileAccountRepository/buildIDTable()`` builds it a slice at a time, beside
    /// reads); returns whether it is in use (a build with too long a probe is dropped).
    @discardableResult
    mutating func buildIDTable(seed: UInt64 = .random(in: .min ... .max)) -> Bool {
        var builder = SortedIDTable.Builder(count: sortedCount, seed: seed)
        guard builder.add(hashes: idTableHashes(from: 0, count: sortedCount, seed: seed), firstSlot: 0) else { return false }
        install(builder.finish())
        return true
    }

    /// The entry of `id`, sealed or not.
    subscript(id: String) -> IndexedAccount? {
        guard let slot = slot(of: ExactKey(id)) else { return nil }
        return entry(at: slot)
    }

    /// The account of `id` when it is held open (every account, once the background pass has opened the sealed
    /// ones), copied out once; nil when there is none or its secrets are still sealed.
    func openAccount(_ id: String) -> Account? {
        guard let slot = slot(of: ExactKey(id)), sealedCount == 0 || sealed[slot] == nil else { return nil }
        return accounts[slot].account
    }

    /// ``openAccount(_:)`` in the compact form the index keeps, copied out once, as it is.
    func openHeld(_ id: String) -> HeldAccount? {
        guard let slot = heldSlot(of: id), sealedCount == 0 || sealed[slot] == nil else { return nil }
        return HeldAccount(compact: accounts[slot])
    }

    /// ``slot(of:)``, for a read about to copy the account out: with the id table, a candidate slot is checked against
    /// the account itself (`provider:uid`, which is how every slot's id is made: ``AccountID/init(provider:uid:)``)
    /// instead of against its id in ``keys``, so that a read of one among many accounts waits for the account's cache
    /// lines alone, not first for its id's and then for the account's.
    private func heldSlot(of id: String) -> Int? {
        guard let idTableReference else { return slot(of: ExactKey(id)) }
        var target = id
        let found = target.withUTF8 { target in
            accounts.withUnsafeBufferPointer { accounts in
                idTableReference._withUnsafeGuaranteedRef { table in
                    // Through a pointer: `accounts[slot]` would copy the whole account, retaining each of its objects.
                    table.position(of: target) { Self.spells(target, accounts.baseAddress! + $0) }
                }
            }
        }
        guard let found else { return slots.isEmpty ? nil : slots[ExactKey(id)] }
        return vacant.isEmpty || !vacant.contains(found) ? found : nil
    }

    /// Whether `id` is `account`'s provider, `:` and uid, byte for byte.
    private static func spells(_ id: UnsafeBufferPointer<UInt8>, _ account: UnsafePointer<CompactAccount>) -> Bool {
        let providerCount = account.pointee.provider.utf8.count
        guard id.count == providerCount + 1 + account.pointee.uid.utf8.count, id[providerCount] == 0x3A else { return false }
        return Self.same(account.pointee.provider, id.baseAddress!) && Self.same(account.pointee.uid, id.baseAddress! + providerCount + 1)
    }

    /// Whether `string`'s bytes are those at `bytes` (which has at least as many).
    private static func same(_ string: String, _ bytes: UnsafePointer<UInt8>) -> Bool {
        var string = string
        return string.withUTF8 { $0.isEmpty || memcmp($0.baseAddress!, bytes, $0.count) == 0 }
    }

    /// The memo kept beside the open account `id` when `accepts` takes it with the account, shown where the index
    /// holds it (``AccountMemoReading/memo(of:where:)``).
    func memo(of id: String, where accepts: (borrowing CompactAccount, any AnyObject & Sendable) -> Bool) -> (any AnyObject & Sendable)? {
        guard let slot = heldSlot(of: id), sealedCount == 0 || sealed[slot] == nil else { return nil }
        return accounts.withUnsafeBufferPointer { accounts in
            // Through a pointer: `accounts[slot]` would copy the whole account, retaining each of its objects.
            let account = accounts.baseAddress! + slot
            guard let memo = account.pointee.memo, accepts(account.pointee, memo) else { return nil }
            return memo
        }
    }

    /// Keeps `memo` beside the open account `id` as it is now (``CompactAccount/memo``), in place of the memo of the
    /// account given one longest ago when ``memoCapacity`` hold one.
    mutating func keepMemo(_ memo: any AnyObject & Sendable, for id: String) {
        guard let slot = slot(of: ExactKey(id)), sealedCount == 0 || sealed[slot] == nil else { return }
        guard memoCapacity > 0 else { return }
        if memoSlots.count < memoCapacity {
            memoSlots.append(slot)
        } else {
            let oldest = memoSlots[memoNext]
            if oldest < accounts.count { accounts[oldest].memo = nil }
            memoSlots[memoNext] = slot
            memoNext = (memoNext + 1) % memoCapacity
        }
        accounts[slot].memo = memo
    }

    /// Every entry, or those of `provider`, sealed or not, in no particular order.
    func entries(provider: String?) -> [(id: String, stored: IndexedAccount)] {
        var selected: [(id: String, stored: IndexedAccount)] = []
        selected.reserveCapacity(provider == nil ? count : 0)
        for slot in accounts.indices where provider.map({ ExactKey.same(accounts[slot].provider, $0) }) ?? true {
            if !vacant.isEmpty && vacant.contains(slot) { continue }
            selected.append((keys[slot].string, entry(at: slot)))
        }
        return selected
    }

    /// Every account counted by status at `now`, from the tally (a sealed account's placeholder marks its refresh token).
    mutating func statusCounts(at now: Date) -> AccountStatusCounts {
        tally.counts(total: count, at: now)
    }

    /// The smallest id (UTF-8 byte order) among the accounts still sealed with key `keyID`, if any; visits every sealed
    /// entry, asking `snapshotKeyIDs` for the key ids of those still in the snapshot.
    func firstSealed(with keyID: String, snapshotKeyIDs: (String) throws(StoreError) -> [String]) throws(StoreError) -> String? {
        var first: String?
        for slot in sealed.indices {
            guard let entry = sealed[slot] else { continue }
            let id = keys[slot].string
            if let first, !ExactKey.precedes(id, first) { continue }
            switch entry {
            case .secrets(let secrets):
                guard secrets.all.contains(where: { $0.key.id == keyID }) else { continue }
            case .inSnapshot:
                guard try snapshotKeyIDs(id).contains(keyID) else { continue }
            }
            first = id
        }
        return first
    }

    /// The ids of the accounts still sealed.
    var sealedIDs: [String] {
        sealed.indices.compactMap { sealed[$0] == nil ? nil : keys[$0].string }
    }

    /// Up to `limit` entries in id order after `after`: of `endUser` when given, else of ids starting with
    /// `provider:` when given, else of every account. The caller checks the rest of its filter on each.
    func candidates(after: String?, provider: String?, endUser: String?, limit: Int) -> [(id: String, stored: IndexedAccount)] {
        let keys: [ExactKey]
        if let endUser {
            let ids = byEndUser[ExactKey(endUser)] ?? []
            var start = 0
            if let after {
                start = SortedKeys.lowerBound(ExactKey(after), in: ids)
                if start < ids.count, ids[start] == ExactKey(after) { start += 1 }
            }
            keys = Array(ids[start..<min(ids.count, start + limit)])
        } else if let provider {
            // Ids are `provider:uid`, so one provider's accounts are the ids with that prefix: one range of the order.
            let prefix = provider + ":"
            keys = ordered.ascending(from: ExactKey(prefix), after: after.map(ExactKey.init), limit: limit) { key in
                key.string.utf8.starts(with: prefix.utf8)
            }
        } else {
            keys = ordered.ascending(after: after.map(ExactKey.init), limit: limit)
        }
        return keys.compactMap { key in slot(of: key).map { (key.string, entry(at: $0)) } }
    }

    /// Stores `stored` under `id`, replacing any entry.
    mutating func set(_ stored: StoredAccount, for id: String) {
        let key = ExactKey(id)
        guard let slot = slot(of: key) else {
            insertNew(stored.account, sealed: stored.sealed, key: key)
            return
        }
        let before = accounts[slot].endUserID
        let after = stored.account.endUser?.id
        if before.map(ExactKey.init) != after.map(ExactKey.init) {
            if let before { removeOwned(key, of: before) }
            if let after { addOwned(key, to: after) }
        }
        let account = CompactAccount(stored.account, reusing: accounts[slot].sharedFields)
        tally.remove(accounts[slot])
        tally.add(account)
        accounts[slot] = account
        setSealed(stored.sealed.map(SealedEntry.secrets), at: slot)
    }

    /// Stores `account` and its still `sealed` secrets under `key`, known to hold no entry: one search, no tally removal.
    ///
    /// A vacant sorted slot of the same id is taken again; any other id goes after the accounts held.
    mutating func insertNew(_ account: Account, sealed secrets: SealedSecrets?, key: ExactKey) {
        let account = CompactAccount(account, reusing: accounts.last?.sharedFields)
        ordered.insert(key)
        if let owner = account.endUserID { addOwned(key, to: owner) }
        tally.add(account)
        if !vacant.isEmpty, let slot = sortedSlot(of: key),
            vacant.remove(slot) != nil
        {
            accounts[slot] = account
            setSealed(secrets.map(SealedEntry.secrets), at: slot)
            return
        }
        if secrets != nil {
            if sealedCount == 0 { startSealed() }
            sealedCount += 1
        }
        if sealedCount > 0 { sealed.append(secrets.map(SealedEntry.secrets)) }
        slots[key] = accounts.count
        keys.append(key)
        accounts.append(account)
    }

    /// Stores the next account of a snapshot (start-up's load): `key` sorts after every id held, and nothing but
    /// snapshot accounts has been stored yet. No hashing: the slot is found later by binary search.
    ///
    /// Everything is consumed: the caller's references move in, so the loading
    /// thread never counts references on objects another thread has just built.
    mutating func appendSorted(_ account: consuming CompactAccount, sealed secrets: consuming SealedEntry?, key: consuming ExactKey) {
        precondition(sortedCount == accounts.count, "snapshot accounts come before any other")
        precondition(idTable == nil, "snapshot accounts come before the id table")
        ordered.append(copy key)
        // The end users' lists are built once the last snapshot account is in (``finishSorted()``).
        tally.add(account)
        if secrets != nil {
            if sealedCount == 0 { startSealed() }
            sealedCount += 1
        }
        if sealedCount > 0 { sealed.append(secrets) }
        prefixes.append(KeyOrder.Prefix(key))
        keys.append(key)
        sortedCount += 1
        // The account is consumed, so it moves into the array instead of being copied field by field.
        accounts.append(account)
    }

    /// Lists the accounts ``appendSorted(_:sealed:key:)`` stored under their end users; called once, after the last of
    /// them and before any other change.
    ///
    /// One lookup in the end users' table per account was the loading thread's largest cost after the kernel's
    /// zeroing (hashing, a probe that misses the cache, an array that grows: `Dictionary.find` on `ExactKey` 6 % of a
    /// start's samples, `isUniquelyReferenced` 2 %). Built here instead, in three passes over the slots split into
    /// `threads` runs: each run numbers its end users in order of first appearance and notes each slot's number (one
    /// lookup per account in a ``KeyNumbering``, no list that grows); the runs' end users are then numbered across runs (one lookup
    /// per end user and run), which gives each end user's list its exact size and each run its place in it; last,
    /// each run writes its ids into those places. The runs are in slot order, so each list is in id order. The
    /// decoding threads have finished by now, so the runs share the cores with nothing else start-up does.
    mutating func finishSorted(threads: Int = ProcessInfo.processInfo.activeProcessorCount) {
        precondition(
            byEndUser.isEmpty && slots.isEmpty && vacant.isEmpty, "called once, after the snapshot's accounts and before any other")
        let count = sortedCount
        // Below a few thousand accounts a second thread costs more than it saves.
        let runs = max(1, min(threads, 8, count / 4096))
        let accounts = self.accounts
        let keys = self.keys
        // Pass 1: each run's end users, numbered.
        let numbered = RunResults<NumberedRun>(count: runs)
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            let slots = Self.slots(ofRun: run, of: runs, count: count)
            // Sized for an end user per eight accounts; the table grows past that.
            var numbers = KeyNumbering(expected: slots.count / 8)
            var counts: [Int] = []
            var slotNumbers = [Int32](repeating: -1, count: slots.count)
            for slot in slots {
                guard let owner = accounts[slot].endUserID else { continue }
                // One lookup: numbers the end user when it is new to this run.
                let (number, isNew) = numbers.number(of: ExactKey(owner))
                if isNew { counts.append(0) }
                counts[Int(number)] += 1
                slotNumbers[slot - slots.lowerBound] = number
            }
            numbered.set(NumberedRun(owners: numbers.keys, counts: counts, numbers: slotNumbers), run: run)
        }
        // Pass 2: every end user numbered across the runs, with the size of its list and where each run's part starts.
        var global = KeyNumbering(expected: numbered.get(run: 0).owners.count)
        var sizes: [Int] = []
        // For each run, the global number of each of its end users and where the run's part of their list starts.
        var globalNumbers: [[Int]] = []
        var starts: [[Int]] = []
        for run in 0..<runs {
            let result = numbered.get(run: run)
            var runNumbers: [Int] = []
            var runStarts: [Int] = []
            runNumbers.reserveCapacity(result.owners.count)
            runStarts.reserveCapacity(result.owners.count)
            for (local, key) in result.owners.enumerated() {
                let (globalNumber, isNew) = global.number(of: key)
                let number = Int(globalNumber)
                if isNew { sizes.append(0) }
                runNumbers.append(number)
                runStarts.append(sizes[number])
                sizes[number] += result.counts[local]
            }
            globalNumbers.append(runNumbers)
            starts.append(runStarts)
        }
        let owners = global.keys
        var offsets: [Int] = []
        offsets.reserveCapacity(owners.count)
        var total = 0
        for size in sizes {
            offsets.append(total)
            total += size
        }
        // Pass 3: each run writes its ids into their places in one buffer holding every list, end to end.
        let lists = UnsafeMutablePointer<ExactKey>.allocate(capacity: max(1, total))
        let listsAddress = Int(bitPattern: lists)
        let (runNumbers, runStarts, listOffsets) = (globalNumbers, starts, offsets)
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            let slots = Self.slots(ofRun: run, of: runs, count: count)
            let result = numbered.get(run: run)
            // The next place of each of this run's end users: its list's offset plus where this run's part starts.
            var next = zip(runNumbers[run], runStarts[run]).map { listOffsets[$0] + $1 }
            let base = UnsafeMutablePointer<ExactKey>(bitPattern: listsAddress)!
            for slot in slots {
                let number = Int(result.numbers[slot - slots.lowerBound])
                guard number >= 0 else { continue }
                (base + next[number]).initialize(to: keys[slot])
                next[number] += 1
            }
        }
        var table: [ExactKey: [ExactKey]] = [:]
        table.reserveCapacity(owners.count)
        for (number, owner) in owners.enumerated() {
            let size = sizes[number]
            let start = lists + offsets[number]
            // Moved out of the buffer, which is then freed without deinitializing what was moved.
            table[owner] = [ExactKey](unsafeUninitializedCapacity: size) { buffer, initialized in
                buffer.baseAddress?.moveInitialize(from: start, count: size)
                initialized = size
            }
        }
        lists.deallocate()
        byEndUser = table
    }

    /// The slots of run `run` of `runs` equal runs over `count` slots.
    private static func slots(ofRun run: Int, of runs: Int, count: Int) -> Range<Int> {
        (count * run / runs)..<(count * (run + 1) / runs)
    }

    /// The memory reserved for accounts still to come (the arrays' capacity past their count): start-up's decoding
    /// threads fault it in ahead of the loading thread (``ReservedMemory``).
    mutating func unwrittenMemory() -> [ReservedMemory] {
        [ReservedMemory.unwritten(&accounts), ReservedMemory.unwritten(&keys), ReservedMemory.unwritten(&prefixes)].compactMap { $0 }
    }

    /// Whether any slot is marked ``SealedEntry/inSnapshot`` (start-up's load left secrets in the snapshot).
    var sealedInSnapshot: Bool {
        sealedCount > 0 && sealed.contains { if case .inSnapshot? = $0 { true } else { false } }
    }

    /// Makes `records` the snapshot that holds the secrets of the slots marked ``SealedEntry/inSnapshot``.
    mutating func keepSnapshotRecords(_ records: SnapshotRecords) {
        snapshotRecords = records
    }

    /// Forgets the account `id`.
    mutating func remove(_ id: String) {
        let key = ExactKey(id)
        guard let slot = slot(of: key) else { return }
        ordered.remove(key)
        if let owner = accounts[slot].endUserID { removeOwned(key, of: owner) }
        tally.remove(accounts[slot])
        setSealed(nil, at: slot)
        if slot < sortedCount {
            // Its id keeps the slot in the binary search's order; the account's memory goes.
            vacant.insert(slot)
            accounts[slot] = Self.placeholder
            return
        }
        slots[key] = nil
        // The last account (also past the sorted ones) fills the gap, so the slots stay dense.
        let last = accounts.count - 1
        if slot != last {
            accounts.swapAt(slot, last)
            keys.swapAt(slot, last)
            if sealedCount > 0 { sealed.swapAt(slot, last) }
            slots[keys[slot]] = slot
        }
        accounts.removeLast()
        keys.removeLast()
        if sealedCount > 0 { sealed.removeLast() }
    }

    /// Puts the opened `account` in place of the entry of `id`, unless a write has replaced that entry since `secrets` were read from it.
    mutating func replace(_ secrets: IndexedAccount.Sealed, by account: Account, id: String) {
        guard sealedCount > 0, let slot = slot(of: ExactKey(id)), let current = sealed[slot] else { return }
        switch (current, secrets) {
        case (.secrets(let current), .secrets(let read)) where current === read: break
        // A slot is marked only by start-up's load, so a slot still marked holds the entry the secrets were read for.
        case (.inSnapshot, .snapshot): break
        default: return
        }
        // Opening changes no status, expiry or refresh token's presence, so the tally stays as it is.
        accounts[slot] = CompactAccount(account, reusing: accounts[slot].sharedFields)
        setSealed(nil, at: slot)
    }

    /// Lists `key` among the accounts of end user `owner`.
    private mutating func addOwned(_ key: ExactKey, to owner: String) {
        let position = SortedKeys.lowerBound(key, in: byEndUser[ExactKey(owner)] ?? [])
        byEndUser[ExactKey(owner), default: []].insertIfAbsent(key, at: position)
    }

    /// Takes `key` off the accounts of end user `owner`.
    private mutating func removeOwned(_ key: ExactKey, of owner: String) {
        guard var ids = byEndUser.removeValue(forKey: ExactKey(owner)) else { return }
        let position = SortedKeys.lowerBound(key, in: ids)
        if position < ids.count, ids[position] == key { ids.remove(at: position) }
        if !ids.isEmpty { byEndUser[ExactKey(owner)] = ids }
    }

    /// The entry in `slot`.
    private func entry(at slot: Int) -> IndexedAccount {
        // Once everything is open (the usual state), there is nothing more to look at.
        guard sealedCount > 0, let entry = sealed[slot] else { return IndexedAccount(account: accounts[slot].account, sealed: nil) }
        switch entry {
        case .secrets(let secrets): return IndexedAccount(account: accounts[slot].account, sealed: .secrets(secrets))
        case .inSnapshot:
            guard let snapshotRecords else { preconditionFailure("a slot marked in the snapshot without its records") }
            return IndexedAccount(account: accounts[slot].account, sealed: .snapshot(snapshotRecords))
        }
    }

    /// Makes `secrets` the sealed secrets of `slot` (nil: it is open); frees the array when none is left sealed.
    private mutating func setSealed(_ secrets: SealedEntry?, at slot: Int) {
        if sealedCount == 0 {
            guard secrets != nil else { return }
            startSealed()
        }
        if sealed[slot] != nil { sealedCount -= 1 }
        if secrets != nil { sealedCount += 1 }
        sealed[slot] = secrets
        // An emptied array keeps its capacity; give the memory back, and let go of the snapshot's records.
        if sealedCount == 0 {
            sealed = []
            snapshotRecords = nil
        }
    }

    /// Gives ``sealed`` a slot (nil) for every account, as the first account to stay sealed arrives.
    private mutating func startSealed() {
        sealed.reserveCapacity(accounts.capacity)
        sealed.append(contentsOf: repeatElement(nil, count: accounts.count))
    }
}

/// What pass 1 of ``AccountIndex/finishSorted(threads:)`` found in one run of slots.
private struct NumberedRun: Sendable {
    /// The run's end users, in order of first appearance (their number in this run is their position).
    var owners: [ExactKey]
    /// How many of the run's accounts each of them has.
    var counts: [Int]
    /// The number of each slot's end user in the run, -1 for an account without one.
    var numbers: [Int32]
}

/// The results of ``AccountIndex/finishSorted(threads:)``'s runs, one per run, each set by its own thread.
private final class RunResults<Result: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: each element is written by one thread only, and read after the `concurrentPerform` that
    // wrote it has returned (which orders the writes before the reads).
    private let results: UnsafeMutableBufferPointer<Result?>

    init(count: Int) {
        results = .allocate(capacity: count)
        results.initialize(repeating: nil)
    }

    deinit {
        results.deinitialize()
        results.deallocate()
    }

    func set(_ result: Result, run: Int) {
        results[run] = result
    }

    func get(run: Int) -> Result {
        guard let result = results[run] else { preconditionFailure("run \(run) has not finished") }
        return result
    }
}
