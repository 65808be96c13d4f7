import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a ``RedisSubscription`` reports to its owner, in order, from its own queue.
enum RedisSubscriptionEvent: Sendable, Equatable {
    /// The connection is open and the commands were answered (these are the replies, in order): messages flow from now on.
    case established([RESPValue])
    /// A message pushed on `channel`.
    case message(channel: String, payload: RESPValue)
    /// The connection was lost or closed; messages pushed until the next `established` are missed.
    case lost(String)
}

/// One connection that subscribes to channels and hands every pushed message to a handler, reconnecting by itself.
///
/// It sends its `commands` (ending in `SUBSCRIBE`) on every (re)connection;
/// once their `replies` arrived it reports ``RedisSubscriptionEvent/established(_:)``,
/// then each message. A silent connection is probed with `PING` after
/// `heartbeat` of quiet and counted lost when the answer takes longer than the
/// timeout, so a dead peer is noticed even without a reset. Reconnects follow
/// the usual backoff. The whole session runs as one long block on the
/// connection's own serial queue, never on Swift's cooperative pool.
final class RedisSubscription: Sendable {
    /// The connection, used by this subscription only.
    let connection: RedisConnection
    private let commands: [RedisCommand]
    private let replies: Int
    private let heartbeat: UInt64
    private let onEvent: @Sendable (RedisSubscriptionEvent) -> Void
    private let stopped = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    /// How long one wait for input lasts, so ``stop()`` takes effect soon.
    private static let slice: UInt64 = 100_000_000

    /// Creates a stopped subscription to `target` sending `commands`, which answer with `replies` values.
    init(
        target: RedisTarget, timeout: Double, commands: [RedisCommand], replies: Int, heartbeat: Double = 1,
        label: String, metrics: RedisMetrics, onEvent: @escaping @Sendable (RedisSubscriptionEvent) -> Void
    ) {
        self.connection = RedisConnection(target: target, timeout: timeout, gate: RedisReconnectGate(), label: label, metrics: metrics)
        self.commands = commands
        self.replies = replies
        self.heartbeat = UInt64(max(0.01, heartbeat) * 1_000_000_000)
        self.onEvent = onEvent
    }

    /// Starts the session loop; a second call does nothing.
    func start() {
        guard !started.exchange(true, ordering: .relaxed) else { return }
        connection.queue.async { self.run() }
    }

    /// Ends the loop within a fraction of a second and closes the connection; the owner hears `lost`.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private var isStopped: Bool { stopped.load(ordering: .relaxed) }

    private func run() {
        while !isStopped {
            do throws(RedisError) {
                try session()
            } catch {
                connection.disconnect()
                onEvent(.lost("\(error)"))
                if !isStopped { usleep(UInt32(Self.slice / 1000)) }
            }
        }
        connection.disconnect()
        onEvent(.lost("stopped"))
    }

    /// One connection's life: connect, send the commands, then read until it fails or the subscription stops.
    private func session() throws(RedisError) {
        try connection.connectIfNeeded()
        try connection.write(commands)
        let now = RedisSocket.monotonicNow
        var answers: [RESPValue] = []
        let answerDeadline = now() + connection.timeoutNanoseconds
        var lastHeard = now()
        var pingSent: UInt64?
        while !isStopped {
            let values = try connection.read(waitingUpTo: Self.slice)
            if !values.isEmpty { lastHeard = now() }
            for value in values {
                if answers.count < replies {
                    if case .error(let message) = value { throw .server(message) }
                    answers.append(value)
                    if answers.count == replies { onEvent(.established(answers)) }
                    continue
                }
                guard let parts = value.array, let kind = parts.first?.string?.lowercased() else {
                    throw .protocolError("a subscribed connection received something other than a push")
                }
                switch kind {
                case "message" where parts.count == 3:
                    onEvent(.message(channel: parts[1].string ?? "", payload: parts[2]))
                case "pong":
                    pingSent = nil
                default:
                    break  // subscribe confirmations of later channels, pmessage: nothing to do
                }
            }
            let current = now()
            if answers.count < replies {
                if current > answerDeadline { throw .timeout }
                continue
            }
            if let sent = pingSent {
                if current - sent > connection.timeoutNanoseconds { throw .timeout }
            } else if current - lastHeard >= heartbeat {
                try connection.write([RedisCommand("PING")])
                pingSent = current
            }
        }
    }
}
