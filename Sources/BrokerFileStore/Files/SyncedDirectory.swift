import BrokerCore

/// A directory whose entry changes (create, rename, unlink) are flushed by fsyncs shared among concurrent writers.
///
/// Each ``sync()`` returns only after an fsync of the directory that began
/// after the call; writers of different files that finish their renames
/// together share that fsync (``GroupCommit``) instead of queueing one each.
final class SyncedDirectory: Sendable {
    /// The directory's path.
    let path: String
    private let group = GroupCommit()

    /// A handle on `path`; nothing is opened until the first ``sync()``.
    init(_ path: String) {
        self.path = path
    }

    /// Returns once every entry change made in the directory before this call is on disk; blocks, so call it on a ``BlockingIO`` lane.
    func sync() throws(StoreError) {
        let ticket = group.ticket()
        let path = self.path
        try group.waitUntilDurable(ticket) { () throws(StoreError) in try DurableFile.syncDirectory(path) }
    }
}
