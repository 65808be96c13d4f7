import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGTERM and SIGINT into a graceful shutdown followed by `exit(0)`.
public enum SignalHandling {
    private static let stopping = Atomic<Bool>(false)

    /// Installs the handlers; keep the returned sources alive for the life of the process.
    /// `afterShutdown` runs once the broker has stopped, before the exit.
    ///
    /// The default action is ignored first: as PID 1 the kernel would drop SIGTERM
    /// anyway without a handler, and elsewhere it would kill us
    /// before the graceful path runs.
    public static func install(
        broker: Broker, logger: BrokerLogger,
        afterShutdown: @escaping @Sendable () async -> Void = {}
    ) -> [any DispatchSourceSignal] {
        let queue = DispatchQueue(label: "token-broker.signals")
        return [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")].map { (number, name) in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { @Sendable in
                logger.log(.info, "signal received", [("signal", .string(name))])
                guard !stopping.exchange(true, ordering: .relaxed) else { return }
                Task {
                    await broker.shutdown()
                    await afterShutdown()
                    exit(0)
                }
            }
            source.activate()
            return source
        }
    }
}
