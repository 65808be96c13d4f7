import CEpoll
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A thread blocking in `epoll_wait` on the set of its connections' sockets, the work handed to it, its timers, and the
/// scratch memory its connections share: an event loop, as SwiftNIO's are.
///
/// Each turn of the loop runs the work queued when the turn began (``execute(_:)``'s blocks and task jobs,
/// ``enqueue(_:)``), fires the timers that are due (``makeTimer(_:)``), then asks `epoll_wait` for up to 64 ready
/// sockets and calls each one's member. Work queued during a turn waits for the next, and one turn reads at most one
/// batch of sockets, so neither starves the other. `epoll_wait` blocks only when nothing is queued, until the nearest
/// timer's deadline; work handed over from another thread then wakes it through an `eventfd` in the set, written only
/// when the thread is (about to be) asleep, so a busy worker takes work without a system call. One readiness batch costs
/// the worker's own wake-up and nothing else: no Dispatch manager thread, no pool thread, no re-arm. The set is
/// level-triggered: a socket with unread bytes or room to write is reported again.
///
/// Server connections, the outbound client's connections and other modules' sockets (PostgreSQL's) share the set:
/// each is an ``EpollMember`` keyed by an id that rides in its events. Members touch their state only from work the
/// worker runs (``execute(_:)``, ``makeTimer(_:)``'s handlers, `ready`), never block in it, and never see the thread.
///
/// ``open()`` starts the thread and ``close()`` stops it and closes its descriptors. While no thread runs (before
/// `open`, after `close`, or when `open` failed) the worker's work runs on a serial Dispatch queue instead, in order,
/// its sockets are refused (``watch(_:id:from:to:)`` is false) and its timers wait for the next `open`.
///
/// `@unchecked Sendable`: `readBuffer`, `members`, `events`, `timers`, `poller` and `wakeFD` are only touched by whoever
/// runs the worker's work (its thread, or the queue while no thread runs), one at a time: the hand-over between the two
/// happens under `inbox`'s lock or at the thread's creation.
package final class HTTPWorker: TaskExecutor, @unchecked Sendable {
    /// Where `recv` writes; parsed in place, leftovers are copied into the connection.
    package let readBuffer: UnsafeMutableRawBufferPointer

    /// The thread's name (15 bytes at most, as the kernel keeps), for `perf`, `top -H` and `/proc`.
    private let name: String
    /// Runs the worker's work while no thread does.
    private let idleQueue: DispatchQueue
    /// The work handed over and whether the thread sleeps; see ``Inbox``.
    private let inbox = Mutex(Inbox())

    /// The epoll descriptor, -1 while no thread runs (readable by tests).
    private(set) var poller: Int32 = -1
    /// The `eventfd` in the set that wakes the thread, -1 while no thread runs (readable by tests).
    private(set) var wakeFD: Int32 = -1
    /// The connections whose sockets are in the set, by connection id (the id rides in each event,
    /// so an event for a connection closed earlier in the same batch finds nothing).
    private var members: [Int: any EpollMember] = [:]
    private let events: UnsafeMutableBufferPointer<epoll_event>
    /// The scheduled timers, a binary min-heap by deadline (then by scheduling order); each knows its slot.
    private var timers: [WorkerTimer] = []
    /// Orders timers with the same deadline by when they were scheduled.
    private var timerSequence: UInt64 = 0

    /// Sockets collected per `epoll_wait`.
    private static let batch = 64
    /// The key the `eventfd`'s events carry; member ids start at 1 and count up.
    private static let wakeKey = UInt64.max

    /// Ids for members, unique in the process: a worker's table may hold several servers' and clients' sockets.
    private static let memberIDs = Atomic<Int>(0)

    /// A fresh id for an ``EpollMember``.
    package static func nextMemberID() -> Int {
        memberIDs.wrappingAdd(1, ordering: .relaxed).newValue
    }

    init(index: Int) {
        name = String("http-worker-\(index)".utf8.prefix(15))!
        idleQueue = DispatchQueue(label: "token-broker.http.worker.\(index)", qos: .userInitiated)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        events = .allocate(capacity: Self.batch)
    }

    deinit {
        readBuffer.deallocate()
        events.deallocate()
    }

    // MARK: Which worker runs

    /// The thread-specific slot holding the worker whose work the thread is running (a worker's thread, or the idle
    /// queue's thread during one block).
    private static let runningKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
        return key
    }()

    private var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Whether the caller runs on this worker (work it runs, or a task job it executes as an executor).
    package var isCurrent: Bool { pthread_getspecific(Self.runningKey) == opaque }

    /// Whether the caller runs on one of `workers`; that worker when it does.
    static func current(among workers: [HTTPWorker]) -> HTTPWorker? {
        guard let running = pthread_getspecific(runningKey) else { return nil }
        return workers.first { $0.opaque == running }
    }

    // MARK: Work handed to the worker

    /// Runs a task's job on the worker (SE-0417 task executor). A handler task that prefers its connection's worker
    /// resumes there after each wait, so a provider's answer read on this worker reaches the task waiting for it
    /// without waking another thread, and its response goes back to the connection without a hop.
    package func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    /// Runs `work` on the worker, after what is already queued there.
    package func execute(_ work: @escaping @Sendable () -> Void) {
        submit(.block(work))
    }

    /// Queues `work` for the thread, waking it when it sleeps; hands it to the idle queue while no thread runs.
    private func submit(_ work: Work) {
        inbox.withLock { inbox in
            guard inbox.phase != .stopped else {
                runIdle(work)
                return
            }
            inbox.work.append(work)
            // Written under the lock: the thread closes the descriptor under it too, so this never writes to a
            // descriptor closed (or reused) meanwhile. Only one submitter per sleep pays for the system call.
            if inbox.sleeping {
                inbox.sleeping = false
                _ = eventfd_write(wakeFD, 1)
            }
        }
    }

    /// Runs `work` on the idle queue as this worker's.
    private func runIdle(_ work: Work) {
        idleQueue.async { [self] in
            let previous = pthread_getspecific(Self.runningKey)
            pthread_setspecific(Self.runningKey, opaque)
            defer { pthread_setspecific(Self.runningKey, previous) }
            run(work)
        }
    }

    private func run(_ work: Work) {
        switch work {
        case .block(let block): block()
        case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    // MARK: The thread

    /// Creates the epoll set and its `eventfd` and starts the thread; does nothing when it runs already. Called before
    /// any socket is attached; work handed over before then has run (or runs first) on the idle queue.
    func open() throws {
        // `close()` and `open()` are not called concurrently; the lock orders them against submitters.
        guard inbox.withLock({ $0.phase == .stopped }) else { return }
        // Work handed to the idle queue before now finishes before the thread takes over, keeping the order.
        idleQueue.sync {}
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw Socket.Failure(call: "epoll_create1", code: errno) }
        let wake = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        guard wake >= 0 else {
            let code = errno
            Glibc.close(fd)
            throw Socket.Failure(call: "eventfd", code: code)
        }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = Self.wakeKey
        guard epoll_ctl(fd, EPOLL_CTL_ADD, wake, &event) == 0 else {
            let code = errno
            Glibc.close(wake)
            Glibc.close(fd)
            throw Socket.Failure(call: "epoll_ctl", code: code)
        }
        poller = fd
        wakeFD = wake
        // The thread holds the worker until it ends.
        let retained = Unmanaged.passRetained(self)
        try inbox.withLock { inbox in
            var thread = pthread_t()
            let result = pthread_create(
                &thread, nil,
                { raw in
                    Unmanaged<HTTPWorker>.fromOpaque(raw!).takeRetainedValue().loop()
                    return nil
                }, retained.toOpaque())
            guard result == 0 else {
                retained.release()
                Glibc.close(wake)
                Glibc.close(fd)
                poller = -1
                wakeFD = -1
                throw Socket.Failure(call: "pthread_create", code: result)
            }
            inbox.thread = thread
            inbox.phase = .running
            inbox.sleeping = false
        }
    }

    /// Stops the thread and closes the epoll set and the `eventfd` (the server shut down): sockets still attached are
    /// no longer served. Returns once the thread has ended, unless called on the worker itself; work queued and not yet
    /// run moves to the idle queue, in order.
    func close() {
        let thread = inbox.withLock { inbox -> pthread_t? in
            guard inbox.phase == .running else { return nil }
            inbox.phase = .stopping
            if inbox.sleeping {
                inbox.sleeping = false
                _ = eventfd_write(wakeFD, 1)
            }
            return inbox.thread
        }
        guard let thread else { return }
        if isCurrent {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// The thread's body: turns of queued work, due timers and ready sockets until ``close()``.
    private func loop() {
        pthread_setspecific(Self.runningKey, opaque)
        Self.nameThread(name)
        var running: [Work] = []
        while true {
            // The work queued before this turn; what it queues runs next turn.
            let stopping = inbox.withLock { inbox -> Bool in
                guard inbox.phase != .stopping else {
                    stop(&inbox)
                    return true
                }
                swap(&inbox.work, &running)
                return false
            }
            if stopping { break }
            for work in running { run(work) }
            running.removeAll(keepingCapacity: true)

            fireDueTimers()

            // Sleep only when nothing is queued, and no longer than until the nearest timer.
            let timeout = inbox.withLock { inbox -> Int32 in
                guard inbox.work.isEmpty, inbox.phase == .running else { return 0 }
                let timeout = nearestTimeout()
                if timeout != 0 { inbox.sleeping = true }
                return timeout
            }
            let count = Int(epoll_wait(poller, events.baseAddress, Int32(Self.batch), timeout))
            if timeout != 0 { inbox.withLock { $0.sleeping = false } }
            for index in 0..<max(count, 0) {
                let event = events[index]
                if event.data.u64 == Self.wakeKey {
                    var value: eventfd_t = 0
                    _ = eventfd_read(wakeFD, &value)
                } else {
                    members[Int(truncatingIfNeeded: event.data.u64)]?.ready(event.events)
                }
            }
        }
        pthread_setspecific(Self.runningKey, nil)
    }

    /// Names the calling thread as `top -H`, `perf` and `/proc/PID/task/TID/comm` show it, through
    /// `/proc/thread-self/comm` (proc(5)): `pthread_setname_np` needs `_GNU_SOURCE`, which Swift's Glibc module lacks.
    private static func nameThread(_ name: String) {
        let fd = Glibc.open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
    }

    /// Ends the thread's turn for good, under the lock: closes the descriptors, so no submitter writes to them after,
    /// and moves the work not yet run to the idle queue ahead of anything handed over later.
    private func stop(_ inbox: inout Inbox) {
        Glibc.close(wakeFD)
        Glibc.close(poller)
        wakeFD = -1
        poller = -1
        inbox.phase = .stopped
        inbox.sleeping = false
        for work in inbox.work { runIdle(work) }
        inbox.work = []
    }

    // MARK: Sockets

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

    // MARK: Timers

    /// A timer whose handler runs on the worker; it does nothing until scheduled.
    package func makeTimer(_ handler: @escaping @Sendable () -> Void) -> WorkerTimer {
        WorkerTimer(worker: self, handler: handler)
    }

    /// `epoll_wait`'s timeout for the nearest deadline: -1 without timers, else milliseconds rounded up (a timer
    /// fires at its deadline or up to a millisecond after, never before).
    private func nearestTimeout() -> Int32 {
        guard let first = timers.first else { return -1 }
        let now = Monotonic.now()
        guard first.deadline > now else { return 0 }
        let milliseconds = (first.deadline - now) / 1_000_000 + 1
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    /// Fires the timers due now, earliest deadline first. A timer a handler schedules again waits for the next turn,
    /// and one a handler cancels or reschedules before its turn in this batch does not fire.
    private func fireDueTimers() {
        guard let first = timers.first else { return }
        let now = Monotonic.now()
        guard first.deadline <= now else { return }
        var due: [(timer: WorkerTimer, generation: UInt64)] = []
        while let top = timers.first, top.deadline <= now {
            removeTimer(at: 0)
            due.append((top, top.generation))
        }
        for (timer, generation) in due where timer.generation == generation {
            timer.handler?()
        }
    }

    /// Puts `timer` in the heap at `deadline`, or moves it there; on the worker.
    fileprivate func arm(_ timer: WorkerTimer, deadline: UInt64) {
        timerSequence &+= 1
        timer.generation &+= 1
        timer.deadline = deadline
        timer.sequence = timerSequence
        if timer.slot < 0 {
            timer.slot = timers.count
            timers.append(timer)
            siftUp(timer.slot)
        } else {
            siftDown(siftUp(timer.slot))
        }
    }

    /// Takes `timer` out of the heap for good; on the worker.
    fileprivate func disarm(_ timer: WorkerTimer) {
        timer.generation &+= 1
        timer.handler = nil
        if timer.slot >= 0 { removeTimer(at: timer.slot) }
    }

    private func removeTimer(at slot: Int) {
        let removed = timers[slot]
        let last = timers.removeLast()
        removed.slot = -1
        guard slot < timers.count else { return }
        timers[slot] = last
        last.slot = slot
        siftDown(siftUp(slot))
    }

    /// Moves the timer at `slot` towards the root while it is earlier than its parent; its new slot.
    @discardableResult
    private func siftUp(_ slot: Int) -> Int {
        var child = slot
        while child > 0 {
            let parent = (child - 1) / 2
            guard timers[child].precedes(timers[parent]) else { break }
            swapTimers(child, parent)
            child = parent
        }
        return child
    }

    /// Moves the timer at `slot` towards the leaves while a child is earlier.
    private func siftDown(_ slot: Int) {
        var parent = slot
        while true {
            let left = 2 * parent + 1
            guard left < timers.count else { return }
            var earliest = left
            if left + 1 < timers.count && timers[left + 1].precedes(timers[left]) { earliest = left + 1 }
            guard timers[earliest].precedes(timers[parent]) else { return }
            swapTimers(earliest, parent)
            parent = earliest
        }
    }

    private func swapTimers(_ a: Int, _ b: Int) {
        timers.swapAt(a, b)
        timers[a].slot = a
        timers[b].slot = b
    }
}

/// What the thread and its submitters share, under the worker's lock.
private struct Inbox: Sendable {
    enum Phase: Sendable { case stopped, running, stopping }

    /// Blocks and jobs handed over, in order.
    var work: [Work] = []
    /// Whether the thread is in (or about to enter) a blocking `epoll_wait`: the next submitter wakes it.
    var sleeping = false
    var phase = Phase.stopped
    /// The thread, while one runs.
    var thread: pthread_t?
}

/// A block or a task's job for a worker.
private enum Work: Sendable {
    case block(@Sendable () -> Void)
    case job(UnownedJob)
}

/// Something whose socket sits in a worker's epoll set: a server connection, an outbound client connection, a
/// PostgreSQL session.
package protocol EpollMember: AnyObject {
    /// The socket is ready with epoll `events`; called on the worker.
    func ready(_ events: UInt32)
}

/// A re-armable one-shot timer of one worker: its handler runs on the worker, as everything else of its owner does.
///
/// Scheduling again moves the one pending firing; ``cancel()`` ends it for good and releases the handler. The worker
/// keeps its scheduled timers in a heap and sleeps no longer than until the nearest. Called off the worker, both hop
/// to it (after what is already queued there); the deadline counts from the call.
///
/// `@unchecked Sendable`: the mutable state is only touched on the worker.
package final class WorkerTimer: @unchecked Sendable {
    private let worker: HTTPWorker
    fileprivate var handler: (@Sendable () -> Void)?
    /// When it fires (monotonic ns), while scheduled.
    fileprivate var deadline: UInt64 = 0
    /// Breaks ties between equal deadlines: scheduled first, fired first.
    fileprivate var sequence: UInt64 = 0
    /// Counts schedules and cancels: a firing taken out of the heap is dropped when this moved meanwhile.
    fileprivate var generation: UInt64 = 0
    /// Its index in the worker's heap, -1 when not scheduled.
    fileprivate var slot = -1

    fileprivate init(worker: HTTPWorker, handler: @escaping @Sendable () -> Void) {
        self.worker = worker
        self.handler = handler
    }

    /// Fires the handler once, `nanoseconds` from now (replacing any firing pending); nothing after ``cancel()``.
    package func schedule(after nanoseconds: UInt64) {
        let (sum, overflow) = Monotonic.now().addingReportingOverflow(nanoseconds)
        let deadline = overflow ? UInt64.max : sum
        guard worker.isCurrent else {
            worker.execute { self.arm(deadline) }
            return
        }
        arm(deadline)
    }

    private func arm(_ deadline: UInt64) {
        guard handler != nil else { return }
        worker.arm(self, deadline: deadline)
    }

    /// Stops the timer; its handler never runs again (and releases what it captured).
    package func cancel() {
        guard worker.isCurrent else {
            worker.execute { self.worker.disarm(self) }
            return
        }
        worker.disarm(self)
    }

    /// Whether it fires before `other`.
    fileprivate func precedes(_ other: WorkerTimer) -> Bool {
        deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
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

    /// Opens `count` workers, each its thread. A worker whose epoll set or thread cannot be created refuses every
    /// socket it is given.
    public init(count: Int) {
        workers = (0..<max(1, count)).map { HTTPWorker(index: $0) }
        for worker in workers { try? worker.open() }
    }

    /// Stops the workers' threads when the last server or client on the group is gone.
    deinit {
        for worker in workers { worker.close() }
    }

    /// The next worker, round robin.
    package func next() -> HTTPWorker {
        workers[cursor.wrappingAdd(1, ordering: .relaxed).oldValue % workers.count]
    }
}
