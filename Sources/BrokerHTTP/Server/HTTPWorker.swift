import CEpoll
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A serial queue, the epoll set of its connections' sockets, and the scratch memory those connections share.
///
/// One Dispatch read source watches the epoll descriptor. When it fires, the
/// worker collects the ready sockets with `epoll_wait` (timeout 0), runs each
/// connection's handler in turn, and asks again while sockets keep being ready,
/// for a bounded number of rounds so that blocks others put on the queue get
/// their turn. Under load one wake-up of Dispatch's event thread then serves a
/// batch of sockets, where a Dispatch source per socket costs a wake-up, a queue
/// hop and a re-arm per event. The set is level-triggered, as Dispatch's own
/// sources are: a socket with unread bytes or room to write is reported again.
///
/// Server connections, the outbound client's connections and other modules' sockets (PostgreSQL's) share the set:
/// each is an ``EpollMember`` keyed by an id that rides in its events. Members touch their state only from blocks the
/// worker runs (``execute(_:)``, ``makeTimer(_:)``'s handlers, `ready`), never through the queue beneath, so how the
/// worker waits for its sockets can change without them.
///
/// `@unchecked Sendable`: `readBuffer`, `members` and `events` are only touched
/// from `queue`, which is serial.
package final class HTTPWorker: TaskExecutor, @unchecked Sendable {
    /// The serial queue every connection of this worker runs on.
    private let queue: DispatchQueue
    /// Where `recv` writes; parsed in place, leftovers are copied into the connection.
    package let readBuffer: UnsafeMutableRawBufferPointer

    /// The epoll descriptor, -1 until ``open()``.
    private var poller: Int32 = -1
    private var readiness: (any DispatchSourceRead)?
    /// The connections whose sockets are in the set, by connection id (the id rides in each event,
    /// so an event for a connection closed earlier in the same batch finds nothing).
    private var members: [Int: any EpollMember] = [:]
    private let events: UnsafeMutableBufferPointer<epoll_event>

    /// Sockets collected per `epoll_wait`.
    private static let batch = 64
    /// `epoll_wait` calls per turn of the queue.
    private static let rounds = 4

    /// Ids for members, unique in the process: a worker's table may hold several servers' and clients' sockets.
    private static let memberIDs = Atomic<Int>(0)

    /// A fresh id for an ``EpollMember``.
    package static func nextMemberID() -> Int {
        memberIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    init(index: Int) {
        queue = DispatchQueue(label: "token-broker.http.worker.\(index)", qos: .userInitiated)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        events = .allocate(capacity: Self.batch)
        queue.setSpecific(key: Self.identity, value: ObjectIdentifier(self))
    }

    /// Marks each worker's queue with the worker, so code can tell which worker's queue it runs on.
    private static let identity = DispatchSpecificKey<ObjectIdentifier>()

    /// Whether the caller runs on this worker (a block it runs, or a task job it executes as an executor).
    package var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.identity) == ObjectIdentifier(self) }

    /// Whether the caller runs on one of `workers`' queues; that worker when it does.
    static func current(among workers: [HTTPWorker]) -> HTTPWorker? {
        guard let running = DispatchQueue.getSpecific(key: identity) else { return nil }
        return workers.first { ObjectIdentifier($0) == running }
    }

    /// Runs a task's job on the worker's queue (SE-0417 task executor). A handler task that prefers its connection's
    /// worker resumes there after each wait, so a provider's answer read on this worker reaches the task waiting for it
    /// without waking another thread, and its response goes back to the connection without a hop.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Runs `work` on the worker, after what is already queued there.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// A timer whose handler runs on the worker; it does nothing until scheduled.
    package func makeTimer(_ handler: @escaping @Sendable () -> Void) -> WorkerTimer {
        WorkerTimer(queue: queue, handler: handler)
    }

    deinit {
        readiness?.cancel()
        readBuffer.deallocate()
        events.deallocate()
    }

    /// Creates the epoll set and starts watching it; called once, before any connection is attached.
    func open() throws {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw Socket.Failure(call: "epoll_create1", code: errno) }
        queue.sync {
            poller = fd
            let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
            source.setEventHandler { [weak self] in self?.drain() }
            source.setCancelHandler { Glibc.close(fd) }
            readiness = source
            source.activate()
        }
    }

    /// Stops watching and closes the epoll set (the server shut down); connections still open can no longer be served.
    func close() {
        queue.async { [self] in
            readiness?.cancel()
            readiness = nil
            poller = -1
        }
    }

    /// Puts `member` in the table events for `id` are delivered through; on the worker.
    package func attach(_ member: any EpollMember, id: Int) {
        members[id] = member
    }

    /// Takes connection `id` out of the table; on the worker.
    package func detach(_ id: Int) {
        members[id] = nil
    }

    /// Changes the events the set holds for socket `fd` of connection `id` from `old` to `new`
    /// (0: not in the set); false when the kernel refuses. On the worker.
    package func watch(_ fd: Int32, id: Int, from old: UInt32, to new: UInt32) -> Bool {
        guard poller >= 0 else { return new == 0 }
        var event = epoll_event()
        event.events = new
        event.data.u64 = UInt64(id)
        let operation = old == 0 ? EPOLL_CTL_ADD : (new == 0 ? EPOLL_CTL_DEL : EPOLL_CTL_MOD)
        return epoll_ctl(poller, operation, fd, &event) == 0
    }

    /// Serves the ready sockets; runs on `queue` when the epoll descriptor is readable.
    private func drain() {
        for _ in 0..<Self.rounds {
            guard poller >= 0 else { return }
            let count = Int(epoll_wait(poller, events.baseAddress, Int32(Self.batch), 0))
            guard count > 0 else { return }
            for index in 0..<count {
                let event = events[index]
                members[Int(truncatingIfNeeded: event.data.u64)]?.ready(event.events)
            }
        }
    }
}

/// Something whose socket sits in a worker's epoll set: a server connection, an outbound client connection, a
/// PostgreSQL session.
package protocol EpollMember: AnyObject {
    /// The socket is ready with epoll `events`; called on the worker.
    func ready(_ events: UInt32)
}

/// A re-armable one-shot timer of one worker: its handler runs on the worker, as everything else of its owner does.
///
/// Scheduling again moves the one pending firing; ``cancel()`` ends it for good. Only touched on the worker.
package final class WorkerTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    fileprivate init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler(handler: handler)
        source.activate()
    }

    /// Fires the handler once, `nanoseconds` from now (replacing any firing pending).
    package func schedule(after nanoseconds: UInt64) {
        source.schedule(deadline: .now() + .nanoseconds(Int(min(nanoseconds, UInt64(Int.max)))))
    }

    /// Stops the timer; its handler never runs again (and releases what it captured).
    package func cancel() {
        source.setEventHandler(handler: nil)
        source.cancel()
    }
}

/// The epoll workers that server connections and outbound client connections run on.
///
/// A server made with a group shares it (the broker's own server and its upstream client),
/// so a provider's answer is read on the same threads as the browser's request that waits for it.
public final class HTTPEventLoops: Sendable {
    package let workers: [HTTPWorker]
    private let cursor = Atomic<Int>(0)

    /// The process-wide group, one worker per core (at least two), opened on first use and never closed.
    public static let shared = HTTPEventLoops(count: max(2, System.coreCount))

    /// Opens `count` workers. A worker whose epoll set cannot be created refuses every socket it is given.
    public init(count: Int) {
        workers = (0..<max(1, count)).map { HTTPWorker(index: $0) }
        for worker in workers { try? worker.open() }
    }

    /// The next worker, round robin.
    package func next() -> HTTPWorker {
        workers[cursor.wrappingAdd(1, ordering: .relaxed).oldValue % workers.count]
    }
}
