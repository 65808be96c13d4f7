import BrokerCore
import Synchronization

/// The steps of an account write that carries events, where a test can stop it as a crash would, or fail it.
enum EventWriteStep: Sendable, Hashable {
    /// The account's journal line fails with an error, as a full disk makes it (not a crash: the write goes on to abort).
    case accountWriteFails
    /// The deliveries are staged and synced; the account's change is not written.
    case staged
    /// The account's change is written and synced; no commit line is appended.
    case accountWritten
}

extension JSONFileAccountRepository {
    /// Makes `outbox`, the webhook outbox of this data directory, the one that events about account changes are staged in
    /// (``update(id:reporting:to:_:)``); the file back end does this when it opens both.
    public func recordEvents(in outbox: JournalWebhookOutbox) {
        precondition(outbox.dataDirectory == dataDirectory, "the outbox of another data directory")
        eventOutbox.withLock { $0 = outbox }
    }

    /// Applies `transform` and writes the event `event` finds in the change to the outbox journal of this data directory,
    /// atomically by the staging protocol of ``JournalWebhookOutbox``.
    ///
    /// Under the id's lock: the deliveries are staged (synced), the account's
    /// put or delete is appended to the journal (synced), then committed (not waited for).
    /// When the account write fails, the staged deliveries are aborted before
    /// the error is thrown. A sink writing elsewhere (not the outbox given to
    /// ``recordEvents(in:)``) gets the change first and the event after
    /// (``AccountRepository/updateThenRecord(id:reporting:to:_:)``). An
    /// unchanged account writes no journal line; an event found all the same is appended on its own.
    public func update(
        id typedID: AccountID, reporting event: AccountChangeEvent, to sink: any EventSink,
        _ transform: @Sendable (Account?) throws(StoreError) -> Account?
    ) async throws(StoreError) -> Account? {
        let id = typedID.string
        guard let outbox = eventOutbox.withLock({ $0 }), sink.changeOutbox === outbox else {
            return try await updateThenRecord(id: typedID, reporting: event, to: sink, transform)
        }
        return try await locks.withLock(id) { () async throws(StoreError) -> Account? in
            let current = try current(id)
            let next = try transform(current)
            if let next, !ExactKey.same(next.id, id) {
                throw .unavailable("update of account \(id): the transform returned account \(next.id)")
            }
            // The record after the change (nil: removed) and the account as it will read back.
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
                    try await outbox.append(deliveries)
                    sink.appended()
                }
                return current
            }
            let ids = deliveries.map(\.id)
            if !deliveries.isEmpty {
                // The record as it is now (what a write that never happened leaves) and as the change leaves it.
                let before = try await BlockingIO.run { () throws(StoreError) -> [UInt8]? in try self.journal.record(id: id) }
                let change = StagedChange(
                    account: id, after: StagedChange.fingerprint(written.bytes), before: StagedChange.fingerprint(before))
                if change.after == change.before {
                    // The record differs below what the store keeps (a date's microseconds): the write changes no
                    // byte, so the store cannot tell whether it happened. The event is simply appended first.
                    try await outbox.append(deliveries)
                } else {
                    try await outbox.stage(deliveries, for: change)
                    try stopIfCrashing(at: .staged)
                }
            }
            do throws(StoreError) {
                if crashPoints.withLock({ $0.contains(.accountWriteFails) }) { throw .unavailable("account write failed for a test") }
                try await BlockingIO.run { () throws(StoreError) in
                    if let bytes = written.bytes {
                        try self.journal.put(bytes, id: id)
                    } else {
                        try self.journal.delete(id: id)
                    }
                }
            } catch {
                if !ids.isEmpty { await outbox.abort(ids) }
                throw error
            }
            index.withLock { index in
                if let stored = written.stored { index.set(StoredAccount(stored), for: id) } else { index.remove(id) }
            }
            clearDamaged(id)
            if !ids.isEmpty {
                try stopIfCrashing(at: .accountWritten)
                await outbox.commit(ids)
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
