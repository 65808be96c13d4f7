import BrokerCore
import Foundation
import Synchronization

/// The parts of `GET /account`'s body that hold no secret (``AccountJSON/Parts``), rendered once per version of an
/// account and kept by id, so that a read renders only its token and status.
///
/// An entry is used only for an account whose rendered fields are the very values it was made from: each string,
/// list and table is the same storage (compared by identity, which the entry keeps alive, so an address is never
/// reused while compared) and each date the same bits. Any write that changes one of them, in this process or in
/// another broker sharing the store, makes the entry miss, and the read renders and keeps the new parts; so there is
/// nothing to invalidate. A store that hands out new storage on every read only ever misses: correct, and no
/// faster. The entries in this cache's table hold no token, ID token or extras: the secrets are written from the
/// account on every read. At most ``capacity`` accounts are kept; when full, all are dropped and the cache fills again.
///
/// With a store that keeps memos (the file store), an ``Answer`` is kept beside the account instead and holds the whole
/// body, secrets included: it lives exactly as long as that version of the account, which the store holds in memory
/// with the same secrets anyway, and a write or a removal of the account drops it.
final class AccountRenderCache: Sendable {
    /// The parts of one account and the fields they were made from: the fields in the object, the bytes of the three
    /// parts and of the two opening audit fields back to back in one array. A read of a random one among many accounts
    /// finds none of it in the processor's caches; two blocks are fewer misses than the six objects (the entry and five
    /// arrays, each somewhere in the heap) they were. A read is handed the entry itself (one reference).
    final class Entry: Sendable {
        /// The id the entry was kept under, and its hash in ``Slots``.
        fileprivate let id: String
        fileprivate let hash: UInt64
        private let provider: String
        private let uid: String
        private let endUserID: String?
        /// The out-of-line fields (token type, scope, screen name, the end user's email and name, tags, settings,
        /// metadata, …): one immutable object, so the same object is the same fields.
        private let shared: CompactAccount.Shared?
        private let dates: (Double?, Double, Double, Double?)
        /// The head, middle and tail parts, then the audit file's and the log's opening fields.
        private let bytes: [UInt8]
        /// Where each of those five ends in ``bytes``.
        private let ends: (head: Int, middle: Int, tail: Int, json: Int, text: Int)

        fileprivate init(_ held: HeldAccount, id: String, hash: UInt64) {
            self.id = id
            self.hash = hash
            let account = held.account
            let parts = AccountJSON.parts(account)
            // A token read's opening audit fields (the id it was kept under, the provider and the end user's id, all
            // compared below), so that a read's audit event copies them too.
            let audit = AuditTrail.Opening(.tokenRead, account: id, provider: account.provider, endUser: AuditEvent.endUser(of: account))
            // One array for the parts and the audit fields, so that a read waits for one block of memory besides the
            // entry.
            let pieces = [parts.head, parts.middle, parts.tail, audit.json, audit.text]
            var bytes: [UInt8] = []
            bytes.reserveCapacity(pieces.reduce(0) { $0 + $1.count })
            var ends: [Int] = []
            for piece in pieces {
                bytes += piece
                ends.append(bytes.count)
            }
            self.bytes = bytes
            self.ends = (ends[0], ends[1], ends[2], ends[3], ends[4])
            let compact = held.compact
            provider = compact.provider
            uid = compact.uid
            endUserID = compact.endUserID
            shared = compact.sharedFields
            dates = compact.renderedSeconds
        }

        /// The three parts and the two opening audit fields, valid within `body`.
        func withBytes<R>(
            _ body: (
                _ head: UnsafeBufferPointer<UInt8>, _ middle: UnsafeBufferPointer<UInt8>, _ tail: UnsafeBufferPointer<UInt8>,
                _ json: UnsafeBufferPointer<UInt8>, _ text: UnsafeBufferPointer<UInt8>
            ) -> R
        ) -> R {
            let ends = ends
            return bytes.withUnsafeBufferPointer { all in
                func piece(_ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: all[start..<end]) }
                return body(
                    piece(0, ends.head), piece(ends.head, ends.middle), piece(ends.middle, ends.tail),
                    piece(ends.tail, ends.json), piece(ends.json, ends.text))
            }
        }

        /// The parts, as arrays.
        var parts: AccountJSON.Parts {
            withBytes { head, middle, tail, _, _ in AccountJSON.Parts(head: Array(head), middle: Array(middle), tail: Array(tail)) }
        }

        /// The opening audit fields, as arrays.
        var audit: AuditTrail.Opening {
            withBytes { _, _, _, json, text in AuditTrail.Opening(json: Array(json), text: Array(text)) }
        }

        /// Whether the entry was kept under exactly `id`'s bytes.
        fileprivate func isKept(under id: String) -> Bool {
            Slots.sameBits(self.id, id) || ExactKey.same(self.id, id)
        }

        /// Whether `held`'s rendered fields are the values these parts were made from.
        fileprivate func renders(_ held: HeldAccount) -> Bool {
            let compact = held.compact
            let (expires, created, updated, refreshed) = dates
            let (otherExpires, otherCreated, otherUpdated, otherRefreshed) = compact.renderedSeconds
            guard
                same(provider, compact.provider) && same(uid, compact.uid) && same(endUserID, compact.endUserID)
                    && expires?.bitPattern == otherExpires?.bitPattern && created.bitPattern == otherCreated.bitPattern
                    && updated.bitPattern == otherUpdated.bitPattern && refreshed?.bitPattern == otherRefreshed?.bitPattern
            else { return false }
            // The file store hands out the object its index keeps: the same one until the account is written.
            let other = compact.sharedFields
            if shared === other { return true }
            // A store that wraps an Account per read (``HeldAccount/init(_:)``) makes a new object each time, holding
            // the account's own strings and tables: compared one by one.
            guard let shared, let other else { return false }
            return same(shared.tokenType, other.tokenType) && same(shared.scope, other.scope)
                && same(shared.screenName, other.screenName) && same(shared.endUserEmail, other.endUserEmail)
                && same(shared.endUserName, other.endUserName) && identical(shared.tags, other.tags)
                && identical(shared.settings, other.settings) && same(shared.metadata, other.metadata)
        }

        /// Whether two optional strings are both absent or the same storage (a small string: the same bytes).
        private func same(_ lhs: String?, _ rhs: String?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil): true
            case (let lhs?, let rhs?): identical(lhs, rhs)
            default: false
            }
        }

        /// Whether two values are the same bits: for a string or a table, the same storage or the same inline
        /// bytes. (`==` on strings would also call two spellings of one character equal, which render differently.)
        private func identical<T>(_ lhs: T, _ rhs: T) -> Bool {
            withUnsafeBytes(of: lhs) { left in
                withUnsafeBytes(of: rhs) { right in
                    var offset = 0
                    while offset + 8 <= left.count {
                        if left.load(fromByteOffset: offset, as: UInt64.self) != right.load(fromByteOffset: offset, as: UInt64.self) {
                            return false
                        }
                        offset += 8
                    }
                    while offset < left.count {
                        if left[offset] != right[offset] { return false }
                        offset += 1
                    }
                    return true
                }
            }
        }
    }

    /// The whole body of an `active` account's `GET /account` answer, secrets included, kept beside the account in a
    /// store that keeps memos (``answer(for:id:keepingIn:)``), with the account as it was rendered from and a token
    /// read's opening audit fields. It is handed out (``keptBeside(_:in:)``) only while the store's account has the
    /// same bits as ``held`` (``CompactAccount/sameBits(as:)``), which this copy keeps exact by keeping that storage
    /// alive; a read's response shares ``body``, uncopied.
    final class Answer: Sendable {
        /// The id it was made for (the bytes the store found the account by).
        let id: String
        /// The account the body was rendered from, as its store held it, without the memo.
        let held: HeldAccount
        /// The body.
        let body: [UInt8]
        /// The audit file's and the log's opening fields, back to back; the first ends at ``jsonEnd``.
        private let opening: [UInt8]
        private let jsonEnd: Int

        fileprivate init(_ held: HeldAccount, id: String) {
            self.id = id
            var compact = held.compact
            compact.memo = nil
            self.held = HeldAccount(compact: compact)
            let account = held.account
            body = AccountJSON.fullBytes(held, quotedStatus: #""active""#, parts: AccountJSON.parts(account))
            let audit = AuditTrail.Opening(.tokenRead, account: id, provider: account.provider, endUser: AuditEvent.endUser(of: account))
            opening = audit.json + audit.text
            jsonEnd = audit.json.count
        }

        /// The opening audit fields, for a JSON line and for a text line, valid within `body`.
        func withOpening<R>(_ body: (_ json: UnsafeBufferPointer<UInt8>, _ text: UnsafeBufferPointer<UInt8>) -> R) -> R {
            let jsonEnd = jsonEnd
            return opening.withUnsafeBufferPointer { all in
                body(UnsafeBufferPointer(rebasing: all[..<jsonEnd]), UnsafeBufferPointer(rebasing: all[jsonEnd...]))
            }
        }

        /// Whether this was rendered from `account` as its store holds it now, for `id`.
        fileprivate func renders(_ account: borrowing CompactAccount, id: String) -> Bool {
            held.compact.sameBits(as: account) && (Slots.sameBits(self.id, id) || ExactKey.same(self.id, id))
        }
    }

    /// How many accounts' parts are kept at most.
    let capacity: Int
    private let entries: Mutex<Slots>
    /// The seed of the ids' hashes (``Slots/hash(_:seed:)``), drawn per process.
    private let seed = UInt64.random(in: .min ... .max)

    /// An empty cache for up to `capacity` accounts.
    init(capacity: Int = 16_384) {
        self.capacity = capacity
        entries = Mutex(Slots(capacity: capacity))
    }

    /// The entries by the exact bytes of their id: open addressing with linear probing in a table at least twice
    /// the capacity, so a probe is short; nothing is removed but all at once, so no slot is ever a tombstone.
    ///
    /// A `[String: Entry]` hashed every read's id with SipHash through `Hasher` (about 450 instructions of the
    /// 750 a kept rendering cost). Here an id is hashed a word at a time with a multiply-and-rotate mix, seeded per
    /// process, so which ids share a probe run cannot be chosen from outside; the entries are bounded by the
    /// capacity, and only stored accounts' ids get one.
    private struct Slots {
        private var slots: [Entry?]
        private(set) var count = 0
        private let mask: Int

        init(capacity: Int) {
            var size = 16
            while size < 2 * capacity { size <<= 1 }
            slots = Array(repeating: nil, count: size)
            mask = size - 1
        }

        /// The hash of `id`'s bytes.
        static func hash(_ id: String, seed: UInt64) -> UInt64 {
            var id = id
            return id.withUTF8 { bytes in
                var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
                func mix(_ word: UInt64) {
                    h = (h ^ word) &* 0xFF51_AFD7_ED55_8CCD
                    h = (h << 31) | (h >> 33)
                }
                var i = 0
                if let base = bytes.baseAddress {
                    let raw = UnsafeRawPointer(base)
                    while i + 8 <= bytes.count {
                        mix(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                        i += 8
                    }
                    if i < bytes.count {
                        var last: UInt64 = 0
                        for j in i..<bytes.count { last = last << 8 | UInt64(bytes[j]) }
                        mix(last)
                    }
                }
                h ^= h >> 29
                h = h &* 0xC4CE_B9FE_1A85_EC53
                return h ^ (h >> 32)
            }
        }

        /// The entry kept under exactly `id`'s bytes.
        func entry(_ id: String, hash: UInt64) -> Entry? {
            var index = Int(truncatingIfNeeded: hash) & mask
            while let entry = slots[index] {
                if entry.hash == hash && entry.isKept(under: id) { return entry }
                index = (index + 1) & mask
            }
            return nil
        }

        /// Whether two strings are the same bits: a small string (up to 15 bytes, as most ids) holds its bytes in
        /// them, so equal small strings are always the same bits; others are compared byte by byte after this.
        static func sameBits(_ lhs: String, _ rhs: String) -> Bool {
            withUnsafeBytes(of: lhs) { left in
                withUnsafeBytes(of: rhs) { right in
                    left.load(as: UInt64.self) == right.load(as: UInt64.self)
                        && left.load(fromByteOffset: 8, as: UInt64.self) == right.load(fromByteOffset: 8, as: UInt64.self)
                }
            }
        }

        /// Keeps `entry` under its id, in place of the one kept under the same bytes; when `capacity` other ids are
        /// kept already, all are dropped first.
        mutating func keep(_ entry: Entry, capacity: Int) {
            var index = Int(truncatingIfNeeded: entry.hash) & mask
            while let kept = slots[index] {
                if kept.hash == entry.hash && ExactKey.same(kept.id, entry.id) {
                    slots[index] = entry
                    return
                }
                index = (index + 1) & mask
            }
            if count >= capacity {
                for i in slots.indices { slots[i] = nil }
                count = 0
                index = Int(truncatingIfNeeded: entry.hash) & mask
            }
            slots[index] = entry
            count += 1
        }
    }

    /// The parts of `account`'s rendering, whose id is `id`: kept ones when they were made from the same fields,
    /// else rendered now and kept.
    func parts(of account: Account, id: String) -> AccountJSON.Parts {
        rendering(of: HeldAccount(account), id: id).parts
    }

    /// ``rendering(of:id:)`` of a whole account.
    func rendering(of account: Account, id: String) -> Entry {
        rendering(of: HeldAccount(account), id: id)
    }

    /// ``parts(of:id:)``, and the opening fields of a token read's audit event about `account` (its id being `id`,
    /// the very bytes the store found the account by, so `provider:uid`).
    ///
    /// The entry is found by `id`'s exact bytes, and used only when the account's provider and uid are the storage
    /// it was made from; these spell the id the entry was made for, so its audit fields name these bytes.
    func rendering(of held: HeldAccount, id: String) -> Entry {
        kept(held, id: id)
    }

    /// The whole answer for the `active` account `held` that `store` handed out (its id being `id`), made now and kept
    /// beside the account in the store (``ImmediateAccountReading/keepMemo(_:for:)``), so that the next reads of this
    /// version of the account find it with the account (``keptBeside(_:in:)``): no second look-up in a table of its
    /// own (a miss in memory of its own, and a lock taken by every worker), and nothing joined or copied.
    func answer(for held: HeldAccount, id: AccountID, keepingIn store: any ImmediateAccountReading) -> Answer {
        let answer = Answer(held, id: id.string)
        store.keepMemo(answer, for: id)
        return answer
    }

    /// The answer kept beside the account `id` in `store` (``answer(for:id:keepingIn:)``) when it was rendered from the
    /// account as the store holds it now; nil when there is none. The account is compared where the store holds it
    /// and not copied out, so a read answered here waits for the memory of the account and of the answer alone.
    func keptBeside(_ id: AccountID, in store: any AccountMemoReading) -> Answer? {
        let raw = id.string
        let memo = store.memo(of: id) { account, memo in
            guard ObjectIdentifier(type(of: memo)) == ObjectIdentifier(Answer.self) else { return false }
            return unsafeDowncast(memo, to: Answer.self).renders(account, id: raw)
        }
        return memo.map { unsafeDowncast($0, to: Answer.self) }
    }

    /// The entry kept in this cache's table for `held`, made now and kept when there is none for it.
    private func kept(_ held: HeldAccount, id: String) -> Entry {
        let hash = Slots.hash(id, seed: seed)
        if let entry = entries.withLock({ $0.entry(id, hash: hash) }), entry.renders(held) { return entry }
        let entry = Entry(held, id: id, hash: hash)
        entries.withLock { $0.keep(entry, capacity: capacity) }
        return entry
    }

    /// How many accounts' parts are kept.
    var count: Int { entries.withLock { $0.count } }
}
