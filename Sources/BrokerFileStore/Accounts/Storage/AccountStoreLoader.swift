import BrokerCore
import Dispatch
import Foundation
import Glibc
import Synchronization

/// Reads the account store of a data directory at start-up: the snapshot, then the journals.
///
/// The snapshot's records are decoded on every core at once (its lines are
/// independent); so are a journal's, which are then applied in file order. With a codec that can
/// defer decryption (``StoredAccountDecoding``) sealed secrets stay sealed
/// until first use, and one record per key id is opened here, so a wrong key
/// still stops start-up.
enum AccountStoreLoader {
    /// What start-up found: the accounts, where each one's record lies, and the files that hold them.
    struct Loaded {
        var index: AccountIndex
        var locations: RecordLocations
        /// The snapshot, if there is one, and its size.
        var snapshot: (file: AccountStoreFile, size: Int)?
        /// The journals to keep, oldest first; the last is the one to append to.
        var journals: [(generation: Int, file: AccountStoreFile, size: Int)]
        /// Whether the last journal ended in a torn line, now cut off.
        var tornLineCut: Bool
        /// Accounts whose latest record so far does not decode, with the error and where it lies (file order, offset).
        /// A later put or delete of the account clears its entry: a record replaced since does not stop start-up.
        var unreadable: [ExactKey: (order: Int, error: StoreError)] = [:]
        /// Accounts whose latest record is plaintext although the codec seals: records of an earlier version, to seal now.
        var plaintext: Set<ExactKey> = []
    }

    /// Removes the temporary snapshots a killed compaction, backup or migration left in `directory` and in its
    /// `backups/`; they were never in use, and each can be as large as the whole store.
    ///
    /// Only names of the form `<file>.tmp.<16 hex digits>` go: a finished backup, a `replaced-…` directory of a restore,
    /// or a file someone put there keeps its place. No backup is being written while the store opens (the data
    /// directory's lock keeps a second broker out).
    static func removeTemporaries(in directory: String) throws(StoreError) {
        for name in try DirectoryListing.names(in: directory)
        where (name.hasPrefix(AccountStoreFormat.snapshotName) || name.hasPrefix(SealedStoreMarker.fileName))
            && DurableFile.hasRandomSuffix(name, marker: DurableFile.temporaryMarker)
        {
            unlink(directory + "/" + name)
        }
        let backups = directory + "/" + AccountStoreFormat.backupDirectoryName
        guard Glibc.access(backups, F_OK) == 0 else { return }
        for name in try DirectoryListing.names(in: backups) where DurableFile.hasRandomSuffix(name, marker: DurableFile.temporaryMarker) {
            unlink(backups + "/" + name)
        }
    }

    /// Loads the store under `directory` (already migrated from the former layout), creating the first journal when there is none.
    ///
    /// Journals older than the snapshot (a compaction was killed after its
    /// rename) are deleted. Throws ``StoreError/corrupt(path:reason:)`` naming
    /// the file and line of the first record that does not read, and, when
    /// `refusingPlaintext` (the store is sealed, ``SealedStoreMarker``), of the
    /// first plaintext record, even one a later line replaced.
    static func load(
        _ directory: String, codec: some AccountRecordCodec, refusingPlaintext: Bool = false, numbers: inout UInt32
    ) throws(StoreError) -> Loaded {
        let names = try DirectoryListing.names(in: directory)
        let deferring = codec.deferredDecoding?.decoder
        let reading = Reading(deferring: deferring, sealing: codec.sealsSecrets, refusingPlaintext: refusingPlaintext)
        var loaded = Loaded(index: AccountIndex(), locations: RecordLocations(), snapshot: nil, journals: [], tornLineCut: false)
        var probes: [String: String] = [:]
        var firstJournal = 1
        let snapshotPath = directory + "/" + AccountStoreFormat.snapshotName
        let descriptor = open(snapshotPath, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            numbers += 1
            let file = AccountStoreFile(path: snapshotPath, descriptor: descriptor, number: numbers)
            let (header, size) = try readSnapshot(file, codec: codec, reading: reading, into: &loaded, probes: &probes)
            loaded.snapshot = (file, size)
            firstJournal = header.journal
        } else if errno != ENOENT {
            throw .posix("open", snapshotPath)
        }
        var generations = names.compactMap(AccountStoreFormat.journalGeneration).sorted()
        for stale in generations where stale < firstJournal { unlink(directory + "/" + AccountStoreFormat.journalName(stale)) }
        generations.removeAll { $0 < firstJournal }
        if generations.isEmpty {
            let path = directory + "/" + AccountStoreFormat.journalName(firstJournal)
            numbers += 1
            loaded.journals = [(firstJournal, try createJournal(path, number: numbers), 0)]
            try DurableFile.syncDirectory(directory)
        }
        for (position, generation) in generations.enumerated() {
            let path = directory + "/" + AccountStoreFormat.journalName(generation)
            let journalDescriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard journalDescriptor >= 0 else { throw .posix("open", path) }
            numbers += 1
            let file = AccountStoreFile(path: path, descriptor: journalDescriptor, number: numbers)
            let newest = position == generations.count - 1
            let size = try replayJournal(
                file, position: position, newest: newest, codec: codec, reading: reading, into: &loaded, probes: &probes)
            loaded.journals.append((generation, file, size))
        }
        if let first = loaded.unreadable.values.min(by: { $0.order < $1.order }) { throw first.error }
        for (keyID, id) in probes.sorted(by: { $0.value < $1.value }) {
            // A journal line may have re-sealed or removed the probe since: then another account proves the key.
            func secrets(_ id: String) throws(StoreError) -> SealedSecrets? {
                guard let stored = loaded.index[id], let sealed = stored.sealed else { return nil }
                return try sealedSecrets(sealed, of: id, reading: reading, path: locationPath(id, loaded))
            }
            let probe =
                try secrets(id).map { $0.all.contains { $0.key.id == keyID } } == true
                ? id : try loaded.index.firstSealed(with: keyID) { id throws(StoreError) in try secrets(id)?.all.map(\.key.id) ?? [] }
            guard let probe, let stored = loaded.index[probe], let sealed = try secrets(probe) else { continue }
            loaded.index.set(StoredAccount(try sealed.open(into: stored.account, path: locationPath(probe, loaded))), for: probe)
        }
        return loaded
    }

    /// The secrets `sealed` holds or names for account `id`, decoded.
    private static func sealedSecrets(
        _ sealed: IndexedAccount.Sealed, of id: String, reading: Reading, path: @autoclosure () -> String
    ) throws(StoreError) -> SealedSecrets {
        switch sealed {
        case .secrets(let secrets): return secrets
        case .snapshot(let records):
            // Only a codec that defers decoding leaves secrets in the snapshot.
            guard let decoder = reading.deferring else { preconditionFailure("secrets left in the snapshot without a deferring codec") }
            return try records.sealedSecrets(of: id, decoder: decoder, path: path())
        }
    }

    /// The file and line of the latest record of `id`, for an error message.
    private static func locationPath(_ id: String, _ loaded: Loaded) -> String {
        guard let location = loaded.locations[ExactKey(id)] else { return "account store" }
        return describe(location, loaded)
    }

    /// Creates an empty journal at `path` (0600), open for reading only.
    ///
    /// No store file stays open for writing (appends and cuts open the file
    /// for that one step): the kernel refuses to remount a file system
    /// read-only while any file on it is open for writing.
    static func createJournal(_ path: String, number: UInt32) throws(StoreError) -> AccountStoreFile {
        let writer = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard writer >= 0 else { throw .posix("create", path) }
        defer { close(writer) }
        guard fchmod(writer, 0o600) == 0 else { throw .posix("chmod", path) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .posix("open", path) }
        return AccountStoreFile(path: path, descriptor: descriptor, number: number)
    }

    /// The file and line of `location`, for an error message: named as a record that does not decode is.
    private static func describe(_ location: RecordLocation, _ loaded: Loaded) -> String {
        var files = loaded.journals.map(\.file)
        if let snapshot = loaded.snapshot { files.append(snapshot.file) }
        guard let file = files.first(where: { $0.number == location.file }) else { return "account store" }
        // Counted only here, on the way to an error: the file is mapped again and scanned up to the record.
        guard let mapped = try? MappedFile(descriptor: file.descriptor, path: file.path), location.offset <= mapped.bytes.count else {
            return file.path + " at byte \(location.offset)"
        }
        return "\(file.path) line \(lineNumber(mapped.bytes, at: location.offset))"
    }

    /// How records are decoded, and what start-up does with plaintext ones.
    fileprivate struct Reading {
        /// The codec's deferred decoding, when it has one: sealed secrets stay sealed until first use.
        var deferring: (any StoredAccountDecoding)?
        /// Whether the codec seals: a plaintext record is then one of an earlier version (or not the broker's).
        var sealing: Bool
        /// Whether the store is sealed: a plaintext record stops start-up.
        var refusingPlaintext: Bool
    }

    /// One snapshot line that did not decode: its place among the chunk's records, and why.
    fileprivate struct Failed {
        var position: Int
        var error: StoreError
    }

    /// What a decoding thread hands back for one chunk of the snapshot.
    ///
    /// Every record's id and place lie in flat arrays in file order (which is
    /// id order), ready to append to the locations. The decoded accounts lie
    /// in parallel buffers in the same order, from which the loading thread
    /// moves each out (no copy, no reference counting) into the index.
    fileprivate struct Chunk {
        var keys: [ExactKey] = []
        var offsets: [Int] = []
        var lengths: [UInt32] = []
        /// The ids of the decoded records.
        var decodedKeys: MoveOutBuffer<ExactKey>
        /// The decoded records, compacted as the index holds them.
        var accounts: MoveOutBuffer<CompactAccount>
        /// Their sealed secrets.
        var sealed: MoveOutBuffer<SealedEntry?>
        var probes: [String: String] = [:]
        var failed: [Failed] = []
    }

    /// Decodes the record in `line` (compact or not), naming `path` in errors.
    private static func decode(
        _ line: UnsafeRawBufferPointer, codec: some AccountRecordCodec, deferring: (any StoredAccountDecoding)?,
        path: @autoclosure () -> String
    ) throws(StoreError) -> StoredAccount {
        if let deferring { return try deferring.storedAccount(reading: line, path: path()) }
        return StoredAccount(try codec.decode([UInt8](line), path: path()))
    }

    /// The line number of the byte at `offset` of `bytes`, counting from 1.
    private static func lineNumber(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        1 + bytes[..<offset].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// Reads the snapshot in `file` into `loaded`; returns its header and size.
    private static func readSnapshot(
        _ file: AccountStoreFile, codec: some AccountRecordCodec, reading: Reading,
        into loaded: inout Loaded, probes: inout [String: String]
    ) throws(StoreError) -> (AccountStoreFormat.Header, Int) {
        let mapped = try MappedFile(descriptor: file.descriptor, path: file.path)
        let bytes = mapped.bytes
        guard let headerEnd = bytes.firstIndex(of: 0x0A), let header = AccountStoreFormat.header(bytes[..<headerEnd]) else {
            throw .corrupt(path: file.path + " line 1", reason: "not an account snapshot header this version reads")
        }
        guard bytes.last == 0x0A else {
            throw .corrupt(
                path: file.path, reason: "the snapshot does not end with a complete line (it is written whole, so it was damaged)")
        }
        // Decoding runs on the worker threads while this one moves each finished chunk, in order, into the index.
        let chunks = chunkRanges(bytes, from: headerEnd + 1, count: ProcessInfo.processInfo.activeProcessorCount * 16)
        let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let decoding = ChunkDecoding<Result<Chunk, StoreError>>(count: chunks.count, ahead: 2 * threads)
        // Reserved for every account the header counts; each decoding thread faults in the part its chunk will fill
        // (chunks are of equal size in bytes, records of about equal size), so the kernel's zeroing of these pages runs
        // beside the decoding, not on this thread as it moves the accounts in (see ReservedMemory).
        loaded.index = AccountIndex(capacity: header.accounts)
        loaded.locations = RecordLocations(file: file.number, capacity: header.accounts)
        // Only for a header whose count the file can hold (no record is shorter than 64 bytes: its id, dates and
        // token alone are longer): a damaged header's count would otherwise have its whole reservation made resident
        // before the load finds the count wrong.
        let plausible = header.accounts <= bytes.count / 64
        let unwritten = plausible ? loaded.index.unwrittenMemory() + loaded.locations.unwrittenMemory() : []
        let workers = DispatchGroup()
        for _ in 0..<threads {
            DispatchQueue.global(qos: .userInitiated).async(group: workers) {
                while let chunk = decoding.nextChunk() {
                    for memory in unwritten { memory.populate(part: chunk, of: chunks.count) }
                    decoding.finish(chunk, decodeChunk(mapped, chunks[chunk], file: file, codec: codec, reading: reading))
                }
            }
        }
        // Even when a chunk fails, the workers stop before the mapping is released.
        defer {
            decoding.cancel()
            workers.wait()
        }
        var total = 0
        for index in 0..<chunks.count {
            let chunk = try decoding.wait(for: index).get()
            // Its records are decoded: the pages holding them need not stay resident (an error message maps them in again).
            mapped.release(chunks[index])
            total += chunk.keys.count
            // Each chunk checked its own order; the first id of this one must sort after the last of the one before.
            if let first = chunk.keys.first, let last = loaded.locations.lastSorted {
                try checkOrder(first, after: last, file: file, bytes: bytes, offset: chunk.offsets[0])
            }
            for position in chunk.keys.indices {
                loaded.locations.appendSorted(chunk.keys[position], offset: chunk.offsets[position], length: chunk.lengths[position])
            }
            for failure in chunk.failed {
                loaded.unreadable[chunk.keys[failure.position]] = (chunk.offsets[failure.position], failure.error)
            }
            // Moved out one by one, so no record is copied on its way into the index.
            while let account = chunk.accounts.next(), let key = chunk.decodedKeys.next(), let sealed = chunk.sealed.next() {
                if reading.sealing && sealed == nil { loaded.plaintext.insert(key) }
                loaded.index.appendSorted(account, sealed: sealed, key: key)
            }
            // The three were appended together, one value each per decoded record (a failed one appends to none).
            precondition(
                chunk.accounts.isEmpty && chunk.decodedKeys.isEmpty && chunk.sealed.isEmpty,
                "a decoded record's id, account and secrets are handed over together")
            for (keyID, id) in chunk.probes where probes[keyID].map({ ExactKey.precedes(id, $0) }) ?? true { probes[keyID] = id }
            // The chunks' scratch memory is free again; hand its pages back as the load goes, not only at its end, so
            // the load's peak stays near what it keeps.
            if index % trimEvery == trimEvery - 1 { HeapTrim.releaseFreeMemory() }
        }
        loaded.index.finishSorted()
        if loaded.index.sealedInSnapshot {
            loaded.index.keepSnapshotRecords(loaded.locations.snapshotRecords(in: file))
        }
        guard total == header.accounts else {
            throw .corrupt(path: file.path, reason: "the header counts \(header.accounts) accounts, the file holds \(total)")
        }
        return (header, bytes.count)
    }

    /// How many chunks the loading thread moves into the index between two returns of free heap pages.
    private static let trimEvery = 16

    /// Throws unless `key` (at `offset`) sorts after `previous`: a snapshot is written in id order, each id once, so
    /// anything else means it was damaged (or not written by the broker), and binary searches over it would miss accounts.
    private static func checkOrder(
        _ key: ExactKey, after previous: ExactKey, file: AccountStoreFile, bytes: UnsafeRawBufferPointer, offset: Int
    ) throws(StoreError) {
        let order = KeyOrder.compare(previous, key)
        guard order >= 0 else { return }
        let path = "\(file.path) line \(lineNumber(bytes, at: offset))"
        if order == 0 { throw .corrupt(path: path, reason: "a second record of account \(key.string)") }
        throw .corrupt(
            path: path,
            reason: "account \(key.string) comes after \(previous.string): a snapshot holds its records in id order, so it was damaged")
    }

    /// The records of one chunk of the snapshot, and for each key id the first record sealed with it (the chunk's probe).
    private static func decodeChunk(
        _ mapped: MappedFile, _ range: Range<Int>, file: AccountStoreFile, codec: some AccountRecordCodec, reading: Reading
    ) -> Result<Chunk, StoreError> {
        let bytes = mapped.bytes
        let expected = range.count / 256
        var chunk = Chunk(
            decodedKeys: MoveOutBuffer(capacity: expected), accounts: MoveOutBuffer(capacity: expected),
            sealed: MoveOutBuffer(capacity: expected))
        // The snapshot is sorted by id, so the first record of a chunk sealed with a key id is the chunk's probe for it.
        var probes: [String: String] = [:]
        // The key ids probed so far: few (usually one), compared by identity first, where a table lookup hashes each time.
        var probed: [String] = []
        // The out-of-line fields of the record before, which the next one shares when it has the same.
        var shared: CompactAccount.Shared?
        var start = range.lowerBound
        chunk.keys.reserveCapacity(expected)
        chunk.offsets.reserveCapacity(expected)
        chunk.lengths.reserveCapacity(expected)
        func probe(_ keyID: String?, _ id: String) {
            guard let keyID, !probed.contains(keyID) else { return }
            probed.append(keyID)
            probes[keyID] = id
        }
        // This thread's reader of the usual record (its own copies of what records are checked against), called
        // without the codec's protocol in between.
        let reader = reading.deferring?.sealedRecordReader()
        do throws(StoreError) {
            while start < range.upperBound {
                let newline = AccountStoreFormat.newline(in: bytes, from: start, before: range.upperBound)!
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
                let key: ExactKey
                // The usual record: sealed and accepted by the codec's fast path. Its envelopes stay in the file,
                // checked but not decoded, until the account is opened.
                let fast =
                    if let reader { reader.readableAccount(reading: line, reusing: shared) } else {
                        reading.deferring?.readableAccount(reading: line, reusing: shared)
                    }
                if let (compact, keyIDs) = fast {
                    let id = AccountID(provider: compact.provider, uid: compact.uid).string
                    probe(keyIDs.accessToken, id)
                    probe(keyIDs.refreshToken, id)
                    probe(keyIDs.tokenSecret, id)
                    probe(keyIDs.idToken, id)
                    key = ExactKey(id)
                    shared = compact.sharedFields
                    chunk.decodedKeys.append(key)
                    chunk.accounts.append(compact)
                    chunk.sealed.append(.inSnapshot)
                    if let previous = chunk.keys.last { try checkOrder(key, after: previous, file: file, bytes: bytes, offset: start) }
                    chunk.keys.append(key)
                    chunk.offsets.append(start)
                    chunk.lengths.append(UInt32(newline - start))
                    start = newline + 1
                    continue
                }
                let recordStart = start
                let path = { "\(file.path) line \(lineNumber(bytes, at: recordStart))" }
                var decoded: StoredAccount?
                var failure: StoreError?
                do throws(StoreError) {
                    decoded = try decode(line, codec: codec, deferring: reading.deferring, path: path())
                } catch {
                    failure = error
                }
                if let decoded {
                    let (account, sealed) = decoded.parts()
                    if reading.refusingPlaintext && sealed == nil {
                        throw .corrupt(path: path(), reason: SealedStoreMarker.plaintextRefusal)
                    }
                    let id = account.id
                    if let sealed {
                        probe(sealed.accessToken.key.id, id)
                        probe(sealed.refreshToken?.key.id, id)
                        probe(sealed.tokenSecret?.key.id, id)
                        probe(sealed.idToken?.key.id, id)
                    }
                    key = ExactKey(id)
                    let compact = CompactAccount(account, reusing: shared)
                    shared = compact.sharedFields
                    chunk.decodedKeys.append(key)
                    chunk.accounts.append(compact)
                    chunk.sealed.append(sealed.map(SealedEntry.secrets))
                } else {
                    // Kept for later: a journal line may replace it; a record without even an id stops the load now.
                    key = ExactKey(try AccountStoreReader.recordID([UInt8](line), path: path()))
                    chunk.failed.append(Failed(position: chunk.keys.count, error: failure!))
                }
                if let previous = chunk.keys.last { try checkOrder(key, after: previous, file: file, bytes: bytes, offset: start) }
                chunk.keys.append(key)
                chunk.offsets.append(start)
                chunk.lengths.append(UInt32(newline - start))
                start = newline + 1
            }
            chunk.probes = probes
            return .success(chunk)
        } catch {
            return .failure(error)
        }
    }

    /// One line of a journal as a decoding thread left it, for the loading thread to apply in file order.
    fileprivate struct JournalLine {
        /// Where the line starts in the file, and where its newline is.
        var start: Int
        var newline: Int
        /// What it records, read without the account store: nil when it is neither a put nor a delete.
        var change: AccountStoreFormat.Change?
        /// For a put, the record decoded; nil when it did not decode (decoded again in order, for the error naming its line).
        var decoded: StoredAccount?
    }

    /// Applies the journal in `file` to `loaded`; returns its size after cutting off a torn last line (only when `newest`).
    ///
    /// The lines are decoded on every core at once (a line's decoding depends on nothing before it), a chunk of whole
    /// lines per thread, and applied on this thread in file order, exactly as one pass from the first line would: a
    /// later put or delete of an account wins, and the first line that stops start-up (a plaintext record in a sealed
    /// store, a line that is neither a put nor a delete, a record without an id) is the one named.
    private static func replayJournal(
        _ file: AccountStoreFile, position: Int, newest: Bool, codec: some AccountRecordCodec, reading: Reading,
        into loaded: inout Loaded, probes: inout [String: String]
    ) throws(StoreError) -> Int {
        let mapped = try MappedFile(descriptor: file.descriptor, path: file.path)
        let bytes = mapped.bytes
        // The complete lines end at the last newline; anything after it is a torn line, handled once they are applied.
        var complete = bytes.count
        while complete > 0, bytes[complete - 1] != 0x0A { complete -= 1 }
        let chunks = chunkRanges(bytes, from: 0, before: complete, count: ProcessInfo.processInfo.activeProcessorCount * 16)
        let threads = max(1, min(chunks.count, ProcessInfo.processInfo.activeProcessorCount))
        let decoding = ChunkDecoding<[JournalLine]>(count: chunks.count, ahead: 2 * threads)
        let workers = DispatchGroup()
        for _ in 0..<threads {
            DispatchQueue.global(qos: .userInitiated).async(group: workers) {
                while let chunk = decoding.nextChunk() {
                    decoding.finish(chunk, decodeJournalChunk(mapped, chunks[chunk], codec: codec, reading: reading))
                }
            }
        }
        // Even when a line stops the load, the workers stop before the mapping is released.
        defer {
            decoding.cancel()
            workers.wait()
        }
        var line = 1
        for index in 0..<chunks.count {
            for entry in decoding.wait(for: index) {
                try apply(
                    entry, line: line, file: file, position: position, bytes: bytes, codec: codec, reading: reading, into: &loaded,
                    probes: &probes)
                line += 1
            }
        }
        guard complete < bytes.count else { return bytes.count }
        // The last line has no newline: a write cut short by a crash, never acknowledged.
        guard newest else {
            throw .corrupt(path: "\(file.path) line \(line)", reason: "a torn line in a journal that is not the newest")
        }
        let writer = open(file.path, O_WRONLY | O_CLOEXEC)
        guard writer >= 0 else { throw .posix("open", file.path) }
        defer { close(writer) }
        guard ftruncate(writer, off_t(complete)) == 0 else { throw .posix("cut the torn last line of", file.path) }
        guard fsync(writer) == 0 else { throw .posix("fsync", file.path) }
        loaded.tornLineCut = true
        return complete
    }

    /// The lines in `range` of a journal (whole lines, each ending in a newline), decoded; nothing is applied here.
    private static func decodeJournalChunk(
        _ mapped: MappedFile, _ range: Range<Int>, codec: some AccountRecordCodec, reading: Reading
    ) -> [JournalLine] {
        let bytes = mapped.bytes
        var lines: [JournalLine] = []
        var start = range.lowerBound
        while start < range.upperBound {
            let newline = AccountStoreFormat.newline(in: bytes, from: start, before: range.upperBound)!
            let text = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            let change = AccountStoreFormat.change(text)
            var decoded: StoredAccount?
            if case .put(let record)? = change {
                // The error's path needs the line number, which only the loading thread counts: it decodes a record
                // that fails here again, in order.
                decoded = try? decode(UnsafeRawBufferPointer(rebasing: text[record]), codec: codec, deferring: reading.deferring, path: "")
            }
            lines.append(JournalLine(start: start, newline: newline, change: change, decoded: decoded))
            start = newline + 1
        }
        return lines
    }

    /// Applies journal line `line` of `file` (the `position`th journal), decoded as `entry`, to `loaded`.
    private static func apply(
        _ entry: JournalLine, line: Int, file: AccountStoreFile, position: Int, bytes: UnsafeRawBufferPointer,
        codec: some AccountRecordCodec, reading: Reading, into loaded: inout Loaded, probes: inout [String: String]
    ) throws(StoreError) {
        let start = entry.start
        switch entry.change {
        case .put(let range)?:
            let text = UnsafeRawBufferPointer(rebasing: bytes[start..<entry.newline])
            let record = UnsafeRawBufferPointer(rebasing: text[range])
            let location = RecordLocation(file: file.number, length: UInt32(range.count), offset: start + range.lowerBound)
            let decoded: Result<StoredAccount, StoreError>
            if let stored = entry.decoded {
                decoded = .success(stored)
            } else {
                do throws(StoreError) {
                    decoded = .success(try decode(record, codec: codec, deferring: reading.deferring, path: "\(file.path) line \(line)"))
                } catch {
                    decoded = .failure(error)
                }
            }
            // Refused even when a later line replaces it: a line the broker did not write stops start-up.
            if reading.refusingPlaintext, case .success(let stored) = decoded, stored.sealed == nil {
                throw .corrupt(path: "\(file.path) line \(line)", reason: SealedStoreMarker.plaintextRefusal)
            }
            switch decoded {
            case .success(let stored):
                let id = stored.account.id
                if reading.sealing {
                    if stored.sealed == nil { loaded.plaintext.insert(ExactKey(id)) } else { loaded.plaintext.remove(ExactKey(id)) }
                }
                loaded.index.set(stored, for: id)
                loaded.locations[ExactKey(id)] = location
                if !loaded.unreadable.isEmpty { loaded.unreadable[ExactKey(id)] = nil }
                propose(id, stored.sealed, probes: &probes)
            case .failure(let error):
                let id = try AccountStoreReader.recordID([UInt8](record), path: "\(file.path) line \(line)")
                loaded.index.remove(id)
                if !loaded.plaintext.isEmpty { loaded.plaintext.remove(ExactKey(id)) }
                loaded.locations[ExactKey(id)] = location
                loaded.unreadable[ExactKey(id)] = ((position + 1) << 40 | start, error)
            }
        case .delete(let id)?:
            loaded.index.remove(id)
            if !loaded.plaintext.isEmpty { loaded.plaintext.remove(ExactKey(id)) }
            loaded.locations[ExactKey(id)] = nil
            if !loaded.unreadable.isEmpty { loaded.unreadable[ExactKey(id)] = nil }
        case nil:
            throw .corrupt(path: "\(file.path) line \(line)", reason: "neither a put nor a delete of an account")
        }
    }

    /// Makes the record of `id` the probe of each key id it is sealed with when its id sorts first.
    private static func propose(_ id: String, _ sealed: SealedSecrets?, probes: inout [String: String]) {
        guard let sealed else { return }
        for secret in sealed.all {
            if let current = probes[secret.key.id], !ExactKey.precedes(id, current) { continue }
            probes[secret.key.id] = id
        }
    }

    /// `count` ranges of whole lines covering `bytes[from..<before]` (`before` just after a newline, by default the
    /// end), each ending just after a newline (fewer for a small file).
    private static func chunkRanges(_ bytes: UnsafeRawBufferPointer, from: Int, before: Int? = nil, count: Int) -> [Range<Int>] {
        let limit = before ?? bytes.count
        let total = limit - from
        guard total > 0 else { return [] }
        let target = max(total / max(1, count), 64 << 10)
        var ranges: [Range<Int>] = []
        var start = from
        while start < limit {
            var end = min(start + target, limit)
            if end < limit {
                end = (AccountStoreFormat.newline(in: bytes, from: end - 1, before: limit) ?? (limit - 1)) + 1
            }
            ranges.append(start..<end)
            start = end
        }
        return ranges
    }
}

/// Hands out a file's chunks (the snapshot's, a journal's) to the decoding threads and gives their results back in chunk order.
///
/// The threads run at most `ahead` chunks ahead of the one taken last: decoded chunks waiting to be moved into the
/// index hold their accounts a second time over (the chunk's buffer and the index's), so a loading thread that
/// falls behind would otherwise make start-up's peak memory grow with the store.
private final class ChunkDecoding<Output>: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private let count: Int
    private let ahead: Int
    private var next = 0
    private var taken = 0
    private var cancelled = false
    private var results: [Int: Output] = [:]

    init(count: Int, ahead: Int) {
        self.count = count
        self.ahead = max(1, ahead)
    }

    /// The next chunk to decode, or nil when all are handed out or the load gave up; waits while the threads are
    /// `ahead` chunks ahead of the one taken last.
    func nextChunk() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled, next < count, next - taken >= ahead { condition.wait() }
        guard !cancelled, next < count else { return nil }
        next += 1
        return next - 1
    }

    /// Hands in the result of `chunk`.
    func finish(_ chunk: Int, _ result: Output) {
        condition.lock()
        results[chunk] = result
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the result of `chunk` and takes it.
    func wait(for chunk: Int) -> Output {
        condition.lock()
        defer { condition.unlock() }
        while results[chunk] == nil { condition.wait() }
        taken = max(taken, chunk + 1)
        condition.broadcast()
        return results.removeValue(forKey: chunk)!
    }

    /// Stops handing out chunks.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }
}
