import BrokerCore
import BrokerFileStore
import BrokerHTTP
import Foundation
import Glibc
import Synchronization

/// `POST /backup`, behind the API key: a consistent snapshot of every account, written into the data directory while
/// the broker keeps serving.
///
/// The file goes to `<data>/backups/accounts-<UTC yyyyMMdd'T'HHmmss'Z'>.snapshot.jsonl` (`-2`, `-3`, … added when a
/// backup of the same second exists), in the account store's snapshot format, secrets sealed as stored; the answer
/// is `{"file":"backups/…","accounts":N,"bytes":B}`. `token-broker restore FILE` installs such a file into a stopped
/// broker's data directory. With Redis the accounts live in Redis, whose own persistence backs them up: the answer
/// is `409 not_supported`.
final class BackupHandlers: Sendable {
    /// The directory under the data directory that backups go to.
    static let directoryName = AccountStoreFormat.backupDirectoryName

    /// The store's backups; nil when the store is backed up by its own means (Redis).
    let store: (any AccountBackup)?
    /// Checks the API key.
    let access: AccessControl
    /// Where each backup is recorded.
    let audit: AuditTrail?
    /// The wall clock, for the file name.
    let wallClock: @Sendable () -> Date
    /// Names of backups being written now, so two at once in one second never pick the same file.
    private let inFlight = Mutex<Set<String>>([])

    init(store: (any AccountBackup)?, access: AccessControl, audit: AuditTrail?, wallClock: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.access = access
        self.audit = audit
        self.wallClock = wallClock
    }

    /// `POST /backup`: writes the snapshot and answers where, how many accounts and how many bytes.
    func backup(_ request: Request) async -> Response {
        let caller: String
        do {
            caller = try access.authorize(request, .admin).name
            try StrictInput.query(request, allowed: [])
        } catch { return error.response }
        guard let repository = store else {
            record(caller: caller, request: request, outcome: "not_supported")
            return Response.error(
                .conflict, code: "not_supported",
                message: "The accounts are in Redis or PostgreSQL (BROKER_STORE), which the broker does not back up: "
                    + "use Redis persistence (BGSAVE/RDB snapshots or AOF) and back up those files, or PostgreSQL's "
                    + "pg_dump or base backups.",
                headers: Self.noStore)
        }
        let stamp = Self.stamp(wallClock())
        let dataDirectory = repository.dataDirectory
        do {
            let name = try await reserveName(stamp: stamp, dataDirectory: dataDirectory)
            defer { _ = inFlight.withLock { $0.remove(name) } }
            let file = Self.directoryName + "/" + name
            let written = try await repository.backup(to: dataDirectory + "/" + file)
            record(
                caller: caller, request: request, outcome: "ok",
                details: [(.file, .string(file)), (.accounts, .int(written.accounts)), (.bytes, .int(written.bytes))])
            var json = JSONObjectWriter()
            json.string("file", file)
            json.raw("accounts", String(written.accounts))
            json.raw("bytes", String(written.bytes))
            return Response.json(.ok, String(decoding: json.finish(), as: UTF8.self), headers: Self.noStore)
        } catch {
            record(caller: caller, request: request, outcome: BrokerError.storageUnavailable(error.message).code)
            return BrokerError.storageUnavailable(error.message).response
        }
    }

    /// Creates `backups/` (0700) when missing and picks the first free name of `stamp`, held in ``inFlight`` until written.
    private func reserveName(stamp: String, dataDirectory: String) async throws(StoreError) -> String {
        let directory = dataDirectory + "/" + Self.directoryName
        return try await BlockingIO.run { [self] () throws(StoreError) -> String in
            if Glibc.access(directory, F_OK) != 0 {
                try DataDirectory.prepare(directory)
                // The new directory's entry in the data directory, durable before a backup inside it is reported.
                try DurableFile.syncDirectory(dataDirectory)
            }
            for attempt in 1...1000 {
                let name = "accounts-" + stamp + (attempt == 1 ? "" : "-\(attempt)") + ".snapshot.jsonl"
                let free = inFlight.withLock { names in
                    guard !names.contains(name), Glibc.access(directory + "/" + name, F_OK) != 0 else { return false }
                    names.insert(name)
                    return true
                }
                if free { return name }
            }
            throw .unavailable("\(directory) already holds 1000 backups of second \(stamp)")
        }
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC: the RFC 3339 form to the second without its separators, so names sort by time.
    static func stamp(_ date: Date) -> String {
        String(RFC3339Date.format(date).prefix(19).filter { $0 != "-" && $0 != ":" }) + "Z"
    }

    private func record(caller: String, request: Request, outcome: String, details: [(AuditEvent.Field, LogValue)] = []) {
        audit?.record(
            AuditEvent(
                kind: .backupWritten, account: nil, provider: nil, endUser: nil, caller: caller, requestID: request.id,
                outcome: outcome, details: details))
    }

    private static var noStore: HTTPHeaders {
        var headers = HTTPHeaders()
        headers.add(name: "Cache-Control", value: "no-store")
        return headers
    }
}
