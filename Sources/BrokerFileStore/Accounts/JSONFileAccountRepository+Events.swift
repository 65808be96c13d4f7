import BrokerCore
import Synchronization

/// The steps of an account write that carries events, where a test can stop it as a crash would, or fail it.
enum EventWriteStep: Sendable, Hashable {
    /// The account file write fails with an error, as a full disk makes it (not a crash: the write goes on to abort).
    case accountWriteFails
    /// The deliveries are staged and synced; the account file is not written.
    case staged
    /// The account file is written and synced; no commit line is appended.
    case accountWritten
}

extension JSONFileAccountRepository {
    /// Applies `transform` and writes the event `event` finds in the change to the outbox journal of this data directory,
    /// atomically by the staging protocol of ``JournalWebhookOutbox``.
    ///
    /// Under the id's lock: the deliveries are staged (synced), the account
    /// file is written or removed (synced), then committed (not waited for).
    /// When the account write fails, the staged deliveries are aborted before
    /// the error is thrown. A sink writing elsewhere (not this directory's
    /// journal) gets the change first and the event after
    /// (``AccountRepository/updateThenRecord(id:reporting:to:_:)``). An
    /// unchanged account writes no account file; an event found all the same is appended on its own.
    public func update(
        id: String, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        guard let journal = sink.changeOutbox as? JournalWebhookOutbox, journal.accountsDirectory == accountsDirectory else {
            return try await updateThenRecord(id: id, reporting: event, to: sink, transform)
        }
        return try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            let current = try current(id)
            let next = try transform(current)
            if let next, !ExactKey.same(next.id, id) {
                throw .unavailable("update of account \(id): the transform returned account \(next.id)")
            }
            let path = path(for: id)
            // The file's bytes after the change (nil: removed) and the account as it will read back.
            let written: (bytes: [UInt8]?, stored: Account?)?
            switch (current, next) {
            case (nil, nil): written = nil
            case (_?, nil): written = (nil, nil)
            case (_, let next?):
                if next == current {
                    written = nil
                } else {
                    let record = try record(for: next)
                    written = (record.bytes, record.stored)
                }
            }
            let after = written.map(\.stored) ?? current
            let deliveries = event(current, after).map { sink.deliveries($0.0, $0.1) } ?? []
            guard let written else {
                if !deliveries.isEmpty {
                    try await journal.append(deliveries)
                    sink.appended()
                }
                return current
            }
            let ids = deliveries.map(\.id)
            if !deliveries.isEmpty {
                // The file as it is now (what a write that never happened leaves) and as the change leaves it.
                let before = try await BlockingIO.run { () throws(StoreError) -> [UInt8]? in try DurableFile.read(path) }
                let change = StagedChange(
                    account: id, after: StagedChange.fingerprint(written.bytes), before: StagedChange.fingerprint(before))
                if change.after == change.before {
                    // The record differs below what the file keeps (a date's microseconds): the write changes no
                    // byte, so the file cannot tell whether it happened. The event is simply appended first.
                    try await journal.append(deliveries)
                } else {
                    try await journal.stage(deliveries, for: change)
                    try stopIfCrashing(at: .staged)
                }
            }
            do throws(StoreError) {
                if crashPoints.withLock({ $0.contains(.accountWriteFails) }) { throw .unavailable("account write failed for a test") }
                try await BlockingIO.run { () throws(StoreError) in
                    if let bytes = written.bytes {
                        try DurableFile.write(bytes, to: path, in: self.directorySync)
                    } else {
                        _ = try DurableFile.remove(path, in: self.directorySync)
                    }
                }
            } catch {
                if !ids.isEmpty { await journal.abort(ids) }
                throw error
            }
            index.withLock { index in
                if let stored = written.stored { index.set(StoredAccount(stored), for: id) } else { index.remove(id) }
            }
            if !ids.isEmpty {
                try stopIfCrashing(at: .accountWritten)
                await journal.commit(ids)
                sink.appended()
            }
            return written.stored
        }
    }

    /// Throws, writing nothing more, when a test asked writes with events to stop at `step`.
    private func stopIfCrashing(at step: EventWriteStep) throws(StoreError) {
        if crashPoints.withLock({ $0.contains(step) }) { throw .unavailable("stopped for a test after step \(step)") }
    }
}
