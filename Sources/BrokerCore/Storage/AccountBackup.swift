/// A store whose accounts the broker can copy to a snapshot file while it serves (`POST /backup`).
public protocol AccountBackup: Sendable {
    /// The data directory; backups are written under it.
    var dataDirectory: String { get }
    /// Writes a consistent snapshot of every account to `path` (complete and synced before it appears there).
    func backup(to path: String) async throws(StoreError) -> (accounts: Int, bytes: Int)
}
