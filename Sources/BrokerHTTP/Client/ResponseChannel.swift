import Synchronization

/// Hands one response from its connection (on the worker queue) to the task that made the call.
///
/// In collecting mode the connection appends the body to one buffer, already held
/// to the caller's cap, and the caller is resumed once, at the end. In streaming
/// mode body pieces queue here up to `highWater` bytes; past that the connection
/// stops reading (its socket leaves EPOLLIN) until the consumer takes pieces and
/// `resume` asks it to read on: the sender then meets TCP's own flow control.
final class ResponseChannel: Sendable {
    /// How the body reaches the caller.
    enum Mode {
        /// Gathered whole; the caller waits for the end.
        case collect
        /// Handed out piece by piece; reading pauses past `highWater` queued bytes.
        case stream(highWater: Int)
    }

    private struct State {
        var head: HTTPResponseHead?
        var failure: HTTPClientError?
        /// Set with `failure` when the call may be sent again on a new connection (a reused one closed before answering).
        var retryable = false
        var finished = false
        var collected: [UInt8] = []
        var pieces: [[UInt8]] = []
        var nextPiece = 0
        var queued = 0
        var paused = false
        var headWaiter: CheckedContinuation<Result<HTTPResponseHead, HTTPClientError>, Never>?
        var endWaiter: CheckedContinuation<Result<(HTTPResponseHead, [UInt8]), HTTPClientError>, Never>?
        var pieceWaiter: CheckedContinuation<Result<[UInt8]?, HTTPClientError>, Never>?
    }

    let mode: Mode
    private let state = Mutex(State())
    /// Asks the connection to read on after a pause; set by the connection before the first byte.
    private let resumer = Mutex<(@Sendable () -> Void)?>(nil)
    /// Asks the connection to give up the exchange (the consumer went away or was cancelled).
    private let canceller = Mutex<(@Sendable () -> Void)?>(nil)

    init(mode: Mode) {
        self.mode = mode
    }

    // MARK: The connection's side (worker queue)

    /// Wires the connection's resume and cancel actions.
    func connect(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        resumer.withLock { $0 = resume }
        canceller.withLock { $0 = cancel }
    }

    /// The head arrived; `reserve` is room to make for a collected body. Returns the wake-up of the caller waiting for
    /// the head, which the connection runs once it has handed on the rest of the bytes it read with the head: the
    /// caller then finds a small body already whole (``wholeBody()``) instead of waiting for it piece by piece.
    func deliverHead(_ head: HTTPResponseHead, reserve: Int) -> HeadWake {
        let waiter = state.withLock { s -> CheckedContinuation<Result<HTTPResponseHead, HTTPClientError>, Never>? in
            s.head = head
            if case .collect = mode, reserve > 0 { s.collected.reserveCapacity(reserve) }
            defer { s.headWaiter = nil }
            return s.headWaiter
        }
        return HeadWake(waiter: waiter, head: head)
    }

    /// Resumes the caller waiting for a head, if one was.
    struct HeadWake {
        fileprivate let waiter: CheckedContinuation<Result<HTTPResponseHead, HTTPClientError>, Never>?
        fileprivate let head: HTTPResponseHead

        func resume() { waiter?.resume(returning: .success(head)) }
    }

    /// Body bytes arrived; false when the connection should stop reading until `resume` is called.
    func deliver(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch mode {
        case .collect:
            state.withLock { $0.collected.append(contentsOf: bytes) }
            return true
        case .stream(let highWater):
            let (waiter, keepReading) = state.withLock {
                s -> (CheckedContinuation<Result<[UInt8]?, HTTPClientError>, Never>?, Bool) in
                if let waiter = s.pieceWaiter {
                    s.pieceWaiter = nil
                    return (waiter, true)
                }
                s.pieces.append(Array(bytes))
                s.queued += bytes.count
                s.paused = s.queued >= highWater
                return (nil, !s.paused)
            }
            waiter?.resume(returning: .success(Array(bytes)))
            return keepReading
        }
    }

    /// The body is complete.
    func finish() {
        typealias End = CheckedContinuation<Result<(HTTPResponseHead, [UInt8]), HTTPClientError>, Never>
        let (end, piece) = state.withLock {
            s -> ((End, HTTPResponseHead, [UInt8])?, CheckedContinuation<Result<[UInt8]?, HTTPClientError>, Never>?) in
            s.finished = true
            var end: (End, HTTPResponseHead, [UInt8])?
            if let waiter = s.endWaiter, let head = s.head {
                end = (waiter, head, s.collected)
                s.collected = []
            }
            s.endWaiter = nil
            defer { s.pieceWaiter = nil }
            return (end, s.pieceWaiter)
        }
        if let (waiter, head, body) = end { waiter.resume(returning: .success((head, body))) }
        piece?.resume(returning: .success(nil))
    }

    /// The exchange failed; every waiter hears `error`.
    func fail(_ error: HTTPClientError, retryable: Bool = false) {
        let (head, end, piece) = state.withLock { s in
            if s.failure == nil && !s.finished {
                s.failure = error
                s.retryable = retryable
            }
            let waiters = (s.headWaiter, s.endWaiter, s.pieceWaiter)
            s.headWaiter = nil
            s.endWaiter = nil
            s.pieceWaiter = nil
            return waiters
        }
        head?.resume(returning: .failure(error))
        end?.resume(returning: .failure(error))
        piece?.resume(returning: .failure(error))
    }

    // MARK: The caller's side

    /// Whether the call failed in a way that allows sending it again on a fresh connection.
    var isRetryable: Bool { state.withLock { $0.retryable } }

    /// Waits for the head (streaming mode).
    func head() async -> Result<HTTPResponseHead, HTTPClientError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Result<HTTPResponseHead, HTTPClientError>? in
                    if let failure = s.failure { return .failure(failure) }
                    if let head = s.head { return .success(head) }
                    s.headWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Waits for the whole response (collecting mode).
    func complete() async -> Result<(HTTPResponseHead, [UInt8]), HTTPClientError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { s -> Result<(HTTPResponseHead, [UInt8]), HTTPClientError>? in
                    if let failure = s.failure { return .failure(failure) }
                    if s.finished, let head = s.head {
                        defer { s.collected = [] }
                        return .success((head, s.collected))
                    }
                    s.endWaiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The next body piece, or nil at the end (streaming mode); taking pieces lets a paused connection read on.
    func next() async -> Result<[UInt8]?, HTTPClientError> {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (ready, wake) = state.withLock { s -> (Result<[UInt8]?, HTTPClientError>?, Bool) in
                    if s.nextPiece < s.pieces.count {
                        let piece = s.pieces[s.nextPiece]
                        s.pieces[s.nextPiece] = []
                        s.nextPiece += 1
                        if s.nextPiece == s.pieces.count {
                            s.pieces.removeAll(keepingCapacity: true)
                            s.nextPiece = 0
                        }
                        s.queued -= piece.count
                        var wake = false
                        if s.paused, case .stream(let highWater) = mode, s.queued < highWater / 2 {
                            s.paused = false
                            wake = true
                        }
                        return (.success(piece), wake)
                    }
                    if let failure = s.failure { return (.failure(failure), false) }
                    if s.finished { return (.success(nil), false) }
                    s.pieceWaiter = continuation
                    // Nothing queued: a paused connection must read on, or this waiter would wait forever.
                    let wake = s.paused
                    s.paused = false
                    return (nil, wake)
                }
                if wake, let resume = resumer.withLock({ $0 }) { resume() }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The whole body when it has all arrived without a failure and none of it was taken yet (streaming mode), else
    /// nil; once taken, the body reads as ended.
    func wholeBody() -> [UInt8]? {
        state.withLock { s -> [UInt8]? in
            guard case .stream = mode, s.finished, s.failure == nil, s.nextPiece == 0 else { return nil }
            let whole = s.pieces.count == 1 ? s.pieces[0] : s.pieces.flatMap { $0 }
            s.pieces.removeAll()
            s.queued = 0
            return whole
        }
    }

    /// Gives up the exchange: the connection closes and every waiter hears `cancelled`.
    func cancel() {
        canceller.withLock { $0 }?()
    }
}
