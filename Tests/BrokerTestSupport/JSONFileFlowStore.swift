import BrokerCore
import BrokerFileStore
import Foundation
import Glibc

/// A ``FlowStore`` keeping one JSON file per pending flow under `<directory>/flows`, named after its state.
///
/// Taking a flow is atomic across threads and processes: the taker renames
/// `S.json` to `S.json.taken.<random>` first, and rename(2) lets exactly one
/// caller move the file. Only the winner reads and deletes it.
///
/// The broker keeps flows in ``JournalFlowStore``, which imports these files
/// once; this store stays for tests, to leave such files behind and to
/// compare stores against.
public final class JSONFileFlowStore: FlowStore {
    /// The marker between a flow's file name and the random suffix of its claimed copy.
    static let takenMarker = StoreFileName.takenFlowMarker

    /// The directory holding one `<state>.json` file per pending flow.
    public let flowsDirectory: String
    /// Whether puts and takes wait for fsync (power-loss safe) or only for the atomic rename.
    public let durable: Bool
    /// Seals the PKCE verifier and request-token secret at rest when set.
    let sealer: EncryptedAccountCodec?

    /// Opens the store under `directory`, creating it and `flows/` with mode 0700.
    ///
    /// Removes temporary and claimed files left by interrupted writes and takes;
    /// a claimed flow was already used once, so it is never offered again.
    ///
    /// With `durable: false` flows are written and claimed atomically but without
    /// fsync: they survive a crash or restart of the process, and a power loss can at
    /// worst cancel sign-ins in progress. Accounts are always written durably.
    public init(directory: String, durable: Bool = true, sealer: EncryptedAccountCodec? = nil) throws(StoreError) {
        self.durable = durable
        self.sealer = sealer
        try DataDirectory.prepare(directory)
        flowsDirectory = directory + "/flows"
        try DataDirectory.prepare(flowsDirectory)
        DurableFile.removeStaleTemporaries(in: flowsDirectory)
        for name in try DirectoryListing.names(in: flowsDirectory)
        where DurableFile.hasRandomSuffix(name, marker: Self.takenMarker) {
            unlink(flowsDirectory + "/" + name)
        }
    }

    /// Opens the store under the file URL `directory`; see ``init(directory:)-(String)``.
    public convenience init(directory: URL) throws(StoreError) {
        try self.init(directory: directory.path)
    }

    /// ``put(_:)`` then `outcomes.record(outcome)`: this store keeps no outcomes of its own.
    public func put(_ flow: PendingFlow, recording outcome: FlowOutcome, in outcomes: any FlowOutcomeStore) async throws(StoreError) {
        try await putThenRecord(flow, outcome, in: outcomes)
    }

    /// Durably writes `flow`; a state that is not 16–128 base64url characters is refused.
    public func put(_ flow: PendingFlow) async throws(StoreError) {
        guard let name = StoreFileName.forFlow(state: flow.state) else {
            throw .unavailable("put flow: the state is not 16 to 128 base64url characters")
        }
        let path = flowsDirectory + "/" + name
        let bytes = try PendingFlowCodec.encode(flow, sealer: sealer)
        let sync = durable
        try await BlockingIO.run { () throws(StoreError) in try DurableFile.write(bytes, to: path, sync: sync) }
    }

    /// Claims, reads and deletes the flow for `state`; nil when absent, expired at `now`, or `state` is malformed.
    ///
    /// A malformed state returns nil without touching the file system. A flow
    /// whose file does not parse is removed and reported as corrupt.
    public func take(state: String, now: Date) async throws(StoreError) -> PendingFlow? {
        guard let name = StoreFileName.forFlow(state: state) else { return nil }
        let path = flowsDirectory + "/" + name
        let sync = durable
        guard let claimed = try await BlockingIO.run({ () throws(StoreError) in try Self.claim(path, sync: sync) }) else {
            return nil
        }
        let flow = try PendingFlowCodec.decode(claimed, path: path, sealer: sealer)
        guard flow.state == state else {
            throw .corrupt(path: path, reason: "the file name does not match the flow's state")
        }
        return flow.isExpired(at: now) ? nil : flow
    }

    /// The earlier store had no device sign-in: nothing is pending without being taken.
    public func pending(state: String, now: Date) async throws(StoreError) -> PendingFlow? { nil }

    /// The earlier store had no device sign-in: nothing is replaced.
    public func replace(_ flow: PendingFlow) async throws(StoreError) -> Bool { false }

    /// The earlier store had no device sign-in.
    public func deviceFlows(now: Date) async throws(StoreError) -> [PendingFlow] { [] }

    /// Removes every flow expired at `now`, and every flow file that does not parse; returns how many.
    public func purgeExpired(now: Date) async throws(StoreError) -> Int {
        let directory = flowsDirectory
        let sync = durable
        let sealer = self.sealer
        return try await BlockingIO.run { () throws(StoreError) -> Int in
            var removed = 0
            for name in try DirectoryListing.names(in: directory) where StoreFileName.forFlow(state: String(name.dropLast(5))) == name {
                let path = directory + "/" + name
                guard let bytes = try DurableFile.read(path) else { continue }
                if let flow = try? PendingFlowCodec.decode(bytes, path: path, sealer: sealer), !flow.isExpired(at: now) { continue }
                // Claim before deleting, so a concurrent take and this purge never both consume one flow.
                if try Self.claim(path, sync: sync) != nil { removed += 1 }
            }
            return removed
        }
    }

    /// Moves the flow file at `path` aside, makes the move durable, and returns its bytes; nil if another caller won.
    ///
    /// The directory is synced after the rename so a flow used before a crash
    /// cannot reappear after it; the claimed copy is then deleted without a sync,
    /// because start-up removes any claimed copy left behind.
    private static func claim(_ path: String, sync: Bool) throws(StoreError) -> [UInt8]? {
        let claimed = path + takenMarker + DurableFile.randomSuffix()
        guard rename(path, claimed) == 0 else {
            if errno == ENOENT { return nil }
            throw .posix("claim flow", path)
        }
        defer { unlink(claimed) }
        if sync { try DurableFile.syncDirectory(DurableFile.directory(of: path)) }
        guard let bytes = try DurableFile.read(claimed) else {
            throw .unavailable("claim flow \(path): the claimed file vanished")
        }
        return bytes
    }
}
