import BrokerTLS
import CEpoll
import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// One outbound connection: a non-blocking socket in a worker's epoll set, carrying one exchange at a time.
///
/// It connects (EPOLLOUT signals completion, `SO_ERROR` says how it went), runs the
/// TLS handshake for `https://` (within the same connect timeout), writes a
/// request, reads the answer through ``HTTPResponseParser`` into a ``ResponseChannel``,
/// and then goes back to its ``ConnectionPool`` or closes. While pooled it keeps EPOLLIN,
/// so a peer that closes an idle connection is noticed and the connection leaves the pool.
///
/// `@unchecked Sendable`: every `var` is touched only on the worker's thread (serial); the
/// async entry points hop onto it before acting.
final class ClientConnection: EpollMember, @unchecked Sendable {
    /// Where the connection is in its life.
    private enum Phase {
        /// Created; no socket yet, or connecting.
        case connecting
        /// In the pool, waiting for a request.
        case idle
        /// Carrying an exchange.
        case active
        /// Closed; terminal.
        case closed
    }

    let id: Int
    let worker: HTTPWorker
    private let pool: ConnectionPool
    private let limits: HTTPParserLimits
    private var fd: Int32 = -1
    private var transport: (any Transport)?
    private var phase = Phase.connecting
    private var interest: UInt32 = 0
    private var reading = false
    private var writing = false
    /// The transport's last read wants the socket writable (TLS), or its last write wants it readable.
    private var readWaitsForWrite = false
    private var writeWaitsForRead = false
    /// One timer for the connection's life, re-armed only when it fires or a deadline comes earlier than it is set
    /// for: a move in the worker's timer heap per call at most (it was a Dispatch timer, whose creation and
    /// cancellation per call woke Dispatch's manager thread twice per call).
    private var timer: WorkerTimer?
    /// Monotonic nanoseconds the timer is set to fire at; 0 when it is not set.
    private var timerFiresAt: UInt64 = 0
    /// The deadline in force and what it does when it passes; 0 and nil when none.
    private var deadlineAt: UInt64 = 0
    private var deadlineAction: (() -> Void)?

    // Connecting.
    private var addresses: [SocketAddress] = []
    private var nextAddress = 0
    private var connectWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
    private var connectFailure = HTTPClientError.connectRefused
    /// TLS to set up once TCP is connected: the shared context and the host the certificate must name.
    private var tls: (context: TLSContext, host: String)?
    private var handshaking = false

    // The exchange.
    private var parser: HTTPResponseParser
    private var channel: ResponseChannel?
    private var inbound: [UInt8] = []
    private var outbound: [UInt8] = []
    private var outboundSent = 0
    private var writeWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
    private var limit = Int.max
    private var truncates = false
    private var received = 0
    private var paused = false
    /// Whether the whole request is written (its last body piece included); only then can the connection be reused.
    private var requestDone = false
    /// Whether the request may be sent again however much of it went out (RFC 9110 §9.2.2).
    private var idempotent = false
    /// Whether the kernel took any byte of the current request.
    private var sentAny = false
    /// Whether this connection carried an exchange before the current one.
    private(set) var exchanges = 0

    init(worker: HTTPWorker, pool: ConnectionPool, limits: HTTPParserLimits) {
        id = HTTPWorker.nextMemberID()
        self.worker = worker
        self.pool = pool
        self.limits = limits
        parser = HTTPResponseParser(limits: limits)
    }

    // MARK: Connecting

    /// Connects to the first of `addresses` that accepts, then runs the TLS handshake when `tls` is given, giving up at
    /// `connectBy` (connect timeout) or `deadline`.
    func connect(
        to addresses: [SocketAddress], tls: (context: TLSContext, host: String)?, connectBy: UInt64, deadline: UInt64
    ) async -> Result<Void, HTTPClientError> {
        await withCheckedContinuation { continuation in
            worker.execute { [self] in
                connectWaiter = continuation
                self.addresses = addresses
                self.tls = tls
                let firesAt = min(connectBy, deadline)
                arm(at: firesAt) { [self] in
                    if phase == .connecting { failConnect(firesAt == deadline && deadline < connectBy ? .deadline : .connectTimeout) }
                }
                worker.attach(self, id: id)
                tryNextAddress()
            }
        }
    }

    private func tryNextAddress() {
        guard phase == .connecting else { return }
        closeSocket()
        guard nextAddress < addresses.count else { return failConnect(connectFailure) }
        let address = addresses[nextAddress]
        nextAddress += 1
        let socketFD = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketFD >= 0 else {
            connectFailure = .connectRefused
            return tryNextAddress()
        }
        fd = socketFD
        let rc = address.withSockaddr { Glibc.connect(socketFD, $0, $1) }
        if rc == 0 { return connected() }
        switch errno {
        case EINPROGRESS, EINTR:
            writing = true
            updateInterest()
        default:
            connectFailure = .connectRefused
            tryNextAddress()
        }
    }

    private func onConnectable() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        writing = false
        updateInterest()
        if error == 0 { return connected() }
        connectFailure = .connectRefused
        tryNextAddress()
    }

    private func connected() {
        Socket.setNoDelay(fd)
        guard let tls else {
            transport = PlainTransport(fd: fd)
            return established()
        }
        do throws(HTTPClientError) {
            transport = try TLSTransport(context: tls.context, fd: fd, host: tls.host)
        } catch {
            return failConnect(error)
        }
        handshaking = true
        handshake()
    }

    /// Runs the TLS handshake as far as the socket allows; a failure is the connection's, never retried on another address.
    private func handshake() {
        guard let transport else { return }
        switch transport.open() {
        case .bytes:
            handshaking = false
            reading = false
            writing = false
            updateInterest()
            established()
        case .wouldBlock(let wantsWrite):
            reading = !wantsWrite
            writing = wantsWrite
            updateInterest()
        case .end, .failed:
            failConnect(.tlsHandshake(reason: "the connection closed during the handshake"))
        case .refused(let error):
            failConnect(error)
        }
    }

    private func established() {
        disarm()
        let waiter = connectWaiter
        connectWaiter = nil
        phase = .idle
        waiter?.resume(returning: .success(()))
    }

    private func failConnect(_ error: HTTPClientError) {
        let waiter = connectWaiter
        connectWaiter = nil
        close()
        waiter?.resume(returning: .failure(error))
    }

    // MARK: The exchange

    /// Starts an exchange: writes `request` and reads the answer into `channel`, with `limit` on its body.
    ///
    /// Returns once the bytes are handed to the kernel (or the exchange failed); the answer arrives through the channel.
    /// `complete` is false when more of the request (a streamed body) follows through ``write(_:last:)``.
    func start(
        _ request: [UInt8], complete: Bool, idempotent: Bool, headRequest: Bool, channel: ResponseChannel, limit: Int,
        truncates: Bool, deadline: UInt64
    ) async -> Result<Void, HTTPClientError> {
        wire(channel)
        return await withCheckedContinuation { continuation in
            begin(
                request, complete: complete, idempotent: idempotent, headRequest: headRequest, channel: channel, limit: limit,
                truncates: truncates, deadline: deadline, writeWaiter: continuation)
        }
    }

    /// Starts an exchange whose request is `request` whole, without waiting for the kernel to take it: the answer (or
    /// the failure, retryable as ``start(_:complete:idempotent:headRequest:channel:limit:truncates:deadline:)`` would
    /// have said) comes through `channel`. Saves the caller a wake-up on the way to waiting for the answer.
    func send(
        _ request: [UInt8], idempotent: Bool, headRequest: Bool, channel: ResponseChannel, limit: Int, truncates: Bool,
        deadline: UInt64
    ) {
        wire(channel)
        begin(
            request, complete: true, idempotent: idempotent, headRequest: headRequest, channel: channel, limit: limit,
            truncates: truncates, deadline: deadline, writeWaiter: nil)
    }

    /// Lets `channel` resume and cancel this connection's reading while its exchange is the connection's.
    private func wire(_ channel: ResponseChannel) {
        // Both act only while this channel's exchange is the connection's: a late cancel never hits a later call.
        // The queued block holds the channel and compares it by identity: were only its `ObjectIdentifier` kept, the
        // channel could be gone when the block runs and a later call's channel made at its address would match (a
        // replay after a 401 cancels the refused answer and, on the worker, starts the next exchange before the queued
        // cancel runs). The closures hold it weakly, as the channel holds them.
        channel.connect(
            resume: { [self, weak channel] in
                guard let channel else { return }
                worker.execute { if self.channel === channel { self.resumeReading() } }
            },
            cancel: { [self, weak channel] in
                guard let channel else { return }
                worker.execute { if self.channel === channel { self.fail(.cancelled) } }
            })
    }

    /// Takes the exchange on the worker queue (queued before any cancel of `channel`, which goes through the same
    /// serial queue) and writes what the socket takes; `writeWaiter` hears when the kernel has it all.
    private func begin(
        _ request: [UInt8], complete: Bool, idempotent: Bool, headRequest: Bool, channel: ResponseChannel, limit: Int,
        truncates: Bool, deadline: UInt64, writeWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
    ) {
        // On the worker's queue already (a task running on the worker): the request goes out now, in order with
        // anything queued later, as the queue is serial and this block runs on it.
        if worker.isCurrent {
            // A peer that closed this connection while it was idle may not have been heard of yet: its hang-up waits
            // in the epoll set until the worker's next turn, which the queued path below would have waited for.
            // Checked now, so such a call fails as retryable before any of it goes out (RFC 9112 §9.3.1).
            if phase == .idle, exchanges > 0, peerHasClosed() { close() }
            return take(
                request, complete: complete, idempotent: idempotent, headRequest: headRequest, channel: channel, limit: limit,
                truncates: truncates, deadline: deadline, writeWaiter: writeWaiter)
        }
        worker.execute { [self] in
            take(
                request, complete: complete, idempotent: idempotent, headRequest: headRequest, channel: channel, limit: limit,
                truncates: truncates, deadline: deadline, writeWaiter: writeWaiter)
        }
    }

    /// Whether the idle socket's peer has ended its side or reset it: a read that peeks finds its end or an error.
    /// Bytes waiting (a TLS record such as a session ticket) and nothing waiting both leave the connection usable.
    private func peerHasClosed() -> Bool {
        guard fd >= 0 else { return true }
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    }

    /// ``begin(_:complete:idempotent:headRequest:channel:limit:truncates:deadline:writeWaiter:)`` on the worker queue.
    private func take(
        _ request: [UInt8], complete: Bool, idempotent: Bool, headRequest: Bool, channel: ResponseChannel, limit: Int,
        truncates: Bool, deadline: UInt64, writeWaiter: CheckedContinuation<Result<Void, HTTPClientError>, Never>?
    ) {
        guard phase == .idle else {
            // The peer closed it between the pool handing it out and now.
            channel.fail(.connectionLost, retryable: true)
            writeWaiter?.resume(returning: .failure(.connectionLost))
            return
        }
        phase = .active
        self.channel = channel
        self.limit = limit
        self.truncates = truncates
        received = 0
        paused = false
        requestDone = complete
        self.idempotent = idempotent
        sentAny = false
        parser.begin(headRequest: headRequest)
        arm(at: deadline) { [self] in fail(.deadline) }
        self.writeWaiter = writeWaiter
        outbound = request
        outboundSent = 0
        reading = true
        flush()
        updateInterest()
    }

    /// Writes more request bytes (a streamed body; `last` with its end); returns when the kernel has taken them all.
    func write(_ bytes: [UInt8], last: Bool) async -> Result<Void, HTTPClientError> {
        await withCheckedContinuation { continuation in
            worker.execute { [self] in
                guard phase == .active, channel != nil else { return continuation.resume(returning: .failure(.connectionLost)) }
                if last { requestDone = true }
                writeWaiter = continuation
                outbound = bytes
                outboundSent = 0
                flush()
                updateInterest()
            }
        }
    }

    private func flush() {
        guard let transport else { return }
        while outboundSent < outbound.count {
            let result = outbound.withUnsafeBytes { transport.write(UnsafeRawBufferPointer(rebasing: $0[outboundSent...])) }
            switch result {
            case .bytes(let n):
                outboundSent += n
                sentAny = true
            case .wouldBlock(let wantsWrite):
                writing = true
                writeWaitsForRead = !wantsWrite
                return
            case .end, .failed, .refused:
                writing = false
                // The answer may already be in (a server that refuses a body closes after answering): reading goes on,
                // and the read side ends the exchange.
                return finishWrite(.failure(.connectionLost))
            }
        }
        writing = false
        writeWaitsForRead = false
        outbound = []
        outboundSent = 0
        finishWrite(.success(()))
    }

    private func finishWrite(_ result: Result<Void, HTTPClientError>) {
        let waiter = writeWaiter
        writeWaiter = nil
        waiter?.resume(returning: result)
    }

    /// The worker found the socket ready with epoll `events`.
    func ready(_ events: UInt32) {
        let failed = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        let readable = events & EPOLLIN.rawValue != 0 || failed
        let writable = events & EPOLLOUT.rawValue != 0 || failed
        switch phase {
        case .connecting:
            if handshaking {
                if readable || writable { handshake() }
            } else if writable {
                onConnectable()
            }
        case .idle:
            // RFC 9112 §9.6: a server may close an idle connection at any time; it leaves the pool now.
            close()
        case .active:
            // TLS may need the other direction than the call's own: a read may wait for writability, a write for input.
            if writing && (writeWaitsForRead ? readable : writable) {
                writeWaitsForRead = false
                flush()
                updateInterest()
            }
            if phase == .active && reading && (readWaitsForWrite ? writable : readable) {
                readWaitsForWrite = false
                onReadable()
                updateInterest()
            }
        case .closed:
            break
        }
    }

    /// Reads what the socket has, and then what the transport still holds decrypted (no readiness announces that).
    private func onReadable() {
        repeat {
            readOnce()
        } while phase == .active && reading && !readWaitsForWrite && transport?.hasBuffered == true
    }

    private func readOnce() {
        guard let transport else { return }
        let buffer = worker.readBuffer
        switch transport.read(into: buffer) {
        case .bytes(let n):
            if inbound.isEmpty {
                process(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            } else {
                inbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
                let pending = inbound
                inbound = []
                pending.withUnsafeBytes { process($0) }
            }
        case .wouldBlock(let wantsWrite):
            readWaitsForWrite = wantsWrite
        case .end:
            onEnd()
        case .failed:
            fail(.connectionLost, retryable: mayResend)
        case .refused(let error):
            fail(error)
        }
    }

    /// Whether a call that failed now may be sent again on a fresh connection: this connection was reused (its peer
    /// may have closed it while idle), no answer byte came, and the request is idempotent or none of it went out.
    private var mayResend: Bool {
        exchanges > 0 && !parser.hasStarted && (idempotent || !sentAny)
    }

    /// The peer ended its output: a close-delimited body ends here; anything else unfinished failed.
    private func onEnd() {
        if !parser.hasStarted {
            // RFC 9112 §9.3.1: a reused connection closed before any answer; the call may be retried.
            return fail(.connectionLost, retryable: mayResend)
        }
        switch parser.finish() {
        case .end: endExchange(reusable: false)
        case .error(let error): fail(.badResponse(reason: error.message))
        case .needMore, .head, .body: fail(.connectionLost)
        }
    }

    /// Runs the parser over `bytes`; whatever is left when it needs more, or pauses, is kept in `inbound`.
    private func process(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        // The caller waiting for the head is woken once the bytes read with it are handed on too: a small answer then
        // reaches it whole, with its connection already back in the pool.
        var wake: ResponseChannel.HeadWake?
        defer { wake?.resume() }
        while phase == .active, let channel {
            let (event, consumed) = parser.parse(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            switch event {
            case .needMore:
                offset += consumed
                if offset < bytes.count { inbound.append(contentsOf: bytes[offset...]) }
                return
            case .head:
                offset += consumed
                guard let head = parser.head, let accepted = accept(head, channel: channel) else { return }
                wake = accepted
            case .body(let range):
                let run = UnsafeRawBufferPointer(rebasing: bytes[(offset + range.lowerBound)..<(offset + range.upperBound)])
                offset += consumed
                // The cap holds at the socket: bytes past it are never handed on.
                if run.count > limit - received {
                    guard truncates else { return fail(.tooLarge(limit: limit)) }
                    _ = channel.deliver(UnsafeRawBufferPointer(rebasing: run[0..<(limit - received)]))
                    received = limit
                    return endExchange(reusable: false)
                }
                received += run.count
                if !channel.deliver(run) {
                    if offset < bytes.count { inbound.append(contentsOf: bytes[offset...]) }
                    paused = true
                    reading = false
                    updateInterest()
                    return
                }
            case .end:
                offset += consumed
                return endExchange(reusable: parser.head?.keepAlive == true && offset == bytes.count)
            case .error(let error):
                return fail(.badResponse(reason: error.message))
            }
        }
    }

    /// Checks a head before handing it on; nil when the exchange failed on it, else the wake-up of its waiter.
    private func accept(_ head: HTTPResponseHead, channel: ResponseChannel) -> ResponseChannel.HeadWake? {
        // RFC 9110 §12.5.3: the request asked for identity; a body in any other coding is refused, never decoded.
        if head.framing != .none, let coding = head.headers["Content-Encoding"], !Self.isIdentity(coding) {
            fail(.refusedContentCoding)
            return nil
        }
        var reserve = 0
        if case .length(let declared) = head.framing {
            // RFC 9110 §8.6: a declared length past the cap is refused before any of the body is read.
            if declared > limit && !truncates {
                fail(.tooLarge(limit: limit))
                return nil
            }
            reserve = min(declared, limit)
        }
        return channel.deliverHead(head, reserve: reserve)
    }

    /// Whether a Content-Encoding value names only `identity` (RFC 9110 §8.4.1).
    static func isIdentity(_ value: String) -> Bool {
        value.split(separator: ",").allSatisfy { $0.trimmingWhitespace().lowercased() == "identity" }
    }

    private func resumeReading() {
        guard phase == .active, paused else { return }
        paused = false
        reading = true
        // Even with nothing left over: a body that ended with the piece that paused still owes its `.end`.
        let pending = inbound
        inbound = []
        pending.withUnsafeBytes { process($0) }
        if phase == .active && reading && transport?.hasBuffered == true { onReadable() }
        updateInterest()
    }

    /// The answer is complete: the connection goes back to the pool when it can carry another, else it closes.
    private func endExchange(reusable: Bool) {
        let channel = self.channel
        self.channel = nil
        disarm()
        exchanges += 1
        // A request body still being written when the answer ended: the connection cannot be reused.
        let reusable = reusable && requestDone && outbound.isEmpty && writeWaiter == nil && inbound.isEmpty
        finishWrite(.success(()))
        if reusable {
            phase = .idle
            reading = true
            writing = false
            readWaitsForWrite = false
            writeWaitsForRead = false
            updateInterest()
            if phase == .idle { pool.checkIn(self) }
        } else {
            close()
        }
        channel?.finish()
    }

    /// Ends the exchange (if any) with `error` and closes.
    private func fail(_ error: HTTPClientError, retryable: Bool = false) {
        guard phase != .closed else { return }
        if phase == .connecting { return failConnect(error) }
        let channel = self.channel
        self.channel = nil
        finishWrite(.failure(error))
        close()
        channel?.fail(error, retryable: retryable)
    }

    // MARK: Plumbing

    private func updateInterest() {
        guard fd >= 0 else { return }
        let wantsIn = (reading && !readWaitsForWrite) || (writing && writeWaitsForRead)
        let wantsOut = (writing && !writeWaitsForRead) || (reading && readWaitsForWrite)
        let wanted = (wantsIn ? EPOLLIN.rawValue | EPOLLRDHUP.rawValue : 0) | (wantsOut ? EPOLLOUT.rawValue : 0)
        guard wanted != interest else { return }
        guard worker.watch(fd, id: id, from: interest, to: wanted) else {
            interest = 0
            if phase != .closed { worker.execute { [self] in fail(.connectionLost) } }
            return
        }
        interest = wanted
    }

    /// Runs `action` on the worker queue at `deadline` unless disarmed or re-armed first.
    private func arm(at deadline: UInt64, _ action: @escaping () -> Void) {
        deadlineAt = max(deadline, 1)
        deadlineAction = action
        if timer == nil {
            // The handler runs on the worker, where every other touch of this connection happens; the timer holds
            // the connection until `close` cancels it.
            timer = worker.makeTimer { [self] in timerFired() }
        }
        if timerFiresAt == 0 || deadlineAt < timerFiresAt { schedule(at: deadlineAt) }
    }

    /// No deadline runs; the timer, if set, fires once more and finds nothing to do.
    private func disarm() {
        deadlineAt = 0
        deadlineAction = nil
    }

    private func schedule(at deadline: UInt64) {
        let now = Monotonic.now()
        timer?.schedule(after: deadline &- min(now, deadline))
        timerFiresAt = deadline
    }

    /// The timer fired: the deadline's action when it has passed, else the timer set again for it.
    private func timerFired() {
        timerFiresAt = 0
        guard deadlineAt != 0 else { return }
        if Monotonic.now() >= deadlineAt {
            let action = deadlineAction
            disarm()
            action?()
        } else {
            schedule(at: deadlineAt)
        }
    }

    private func closeSocket() {
        guard fd >= 0 else { return }
        reading = false
        writing = false
        readWaitsForWrite = false
        writeWaitsForRead = false
        updateInterest()
        interest = 0
        transport?.close()
        transport = nil
        Glibc.close(fd)
        fd = -1
    }

    /// Closes the socket and leaves the worker's table and the pool, once.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        disarm()
        timer?.cancel()
        timer = nil
        closeSocket()
        inbound = []
        outbound = []
        worker.detach(id)
        pool.closed(self)
    }

    /// Closes from any thread (the pool's idle timeout, or its shutdown).
    func closeSoon(ifIdle: Bool) {
        worker.execute { [self] in
            if !ifIdle || phase == .idle { close() }
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}
