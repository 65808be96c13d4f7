import Synchronization

/// The session that `LISTEN`s on ``PostgresAccountRepository/channel`` for a replica's cache: the cache is on only
/// while it is up, and dropped whole the moment it is lost (notifications sent meanwhile are missed), then refilled
/// by reads once the session is back.
///
/// Its own connection, outside the pool (a pooled session runs statements, and a listening one must be read all
/// the time). A lost session is opened again after 0.5 s, then up to 5 s between attempts.
final class PostgresAccountListener: Sendable {
    private let client: PostgresClient
    private let cache: PostgresAccountCache
    private let task = Mutex<Task<Void, Never>?>(nil)
    /// Times the listening session came up.
    let connects = Atomic<UInt64>(0)

    init(client: PostgresClient, cache: PostgresAccountCache) {
        self.client = client
        self.cache = cache
    }

    /// Starts listening in the background; the cache turns on once `LISTEN` succeeded.
    func start() {
        task.withLock { task in
            guard task == nil else { return }
            task = Task { [self] in await run() }
        }
    }

    /// Stops listening and turns the cache off.
    func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
        cache.disable()
    }

    private func run() async {
        var pause: UInt64 = 500_000_000
        while !Task.isCancelled {
            // Named so writers see in pg_stat_activity that a cache listens (PostgresAccountRepository.notify).
            var configuration = client.configuration
            configuration.applicationName = PostgresAccountRepository.listenerApplicationName
            let connection = PostgresConnection(
                configuration: configuration, label: "token-broker.postgres.listen", scramKeys: client.pool.scramKeys,
                metrics: client.pool.metrics, tls: client.pool.tls)
            do {
                _ = try await connection.run(
                    [PostgresQuery("LISTEN \(PostgresAccountRepository.channel)")],
                    deadline: PostgresSocket.deadline(in: client.configuration.statementTimeout))
                // From here every change committed is notified: what is read from now on may be kept.
                cache.enable()
                connects.add(1, ordering: .relaxed)
                pause = 500_000_000
                while !Task.isCancelled {
                    for notification in try await connection.notifications(until: PostgresSocket.deadline(in: 1))
                    where notification.channel == PostgresAccountRepository.channel {
                        if notification.payload.isEmpty { cache.flush() } else { cache.invalidate(notification.payload) }
                    }
                }
            } catch {
                // Lost, refused or never opened: nothing cached may be trusted until LISTEN is back.
            }
            cache.disable()
            await connection.close()
            if Task.isCancelled { return }
            try? await Task.sleep(nanoseconds: pause)
            pause = min(pause * 2, 5_000_000_000)
        }
    }
}
