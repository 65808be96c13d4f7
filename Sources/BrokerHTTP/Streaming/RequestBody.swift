import Synchronization

/// The body of a request to a streaming route, read piece by piece while it still arrives.
///
/// The connection pushes decoded pieces as they are parsed and stops reading from the socket while more than
/// `highWater` bytes wait here unread (TCP flow control then holds the client back); reading resumes once the
/// handler has taken the buffer down to half of that. So a body of any size costs at most about
/// `highWater` plus one socket read of memory.
public final class RequestBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = RequestBodyError

    private struct State {
        var pieces: [[UInt8]] = []
        var first = 0
        var buffered = 0
        var finished = false
        var failure: RequestBodyError?
        var waiter: CheckedContinuation<Result<[UInt8]?, RequestBodyError>, Never>?
        /// Whether the producer was told to stop (the buffer passed `highWater`) and waits for `onDrain`.
        var producerPaused = false
        var onDrain: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())
    /// Unread bytes above which the producer pauses.
    public let highWater: Int

    /// An empty body that receives pieces through `push`, `finish` and `fail`.
    public init(highWater: Int = 256 * 1024) {
        self.highWater = Swift.max(highWater, 1)
    }

    /// A body already complete: `bytes` as one piece (none when empty).
    public convenience init(bytes: [UInt8]) {
        self.init()
        if !bytes.isEmpty { _ = push(bytes) }
        finish()
    }

    // MARK: Producer (the connection)

    /// Sets what runs (on any thread) when a paused producer may push again.
    func setOnDrain(_ onDrain: @escaping @Sendable () -> Void) {
        state.withLock { $0.onDrain = onDrain }
    }

    /// Adds a piece; false when the buffer now holds more than `highWater` and the producer must wait for `onDrain`.
    @discardableResult
    func push(_ bytes: [UInt8]) -> Bool {
        let waiter: CheckedContinuation<Result<[UInt8]?, RequestBodyError>, Never>?
        let more: Bool
        (waiter, more) = state.withLock { s in
            guard !s.finished, s.failure == nil, !bytes.isEmpty else { return (nil, true) }
            if let w = s.waiter {
                s.waiter = nil
                return (w, true)
            }
            s.pieces.append(bytes)
            s.buffered += bytes.count
            if s.buffered > highWater {
                s.producerPaused = true
                return (nil, false)
            }
            return (nil, true)
        }
        waiter?.resume(returning: .success(bytes))
        return more
    }

    /// The body is complete.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Result<[UInt8]?, RequestBodyError>, Never>? in
            guard !s.finished, s.failure == nil else { return nil }
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: .success(nil))
    }

    /// The body breaks off (`error`); a reader gets the pieces already buffered, then the error.
    func fail(_ error: RequestBodyError) {
        let waiter = state.withLock { s -> CheckedContinuation<Result<[UInt8]?, RequestBodyError>, Never>? in
            guard !s.finished, s.failure == nil else { return nil }
            s.failure = error
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: .failure(error))
    }

    // MARK: Consumer (the handler)

    /// The next piece, nil at the end of the body; throws when the body broke off. One reader at a time.
    public func next() async throws(RequestBodyError) -> [UInt8]? {
        if let ready = take() { return try ready.get() }
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<[UInt8]?, RequestBodyError>, Never>) in
            let (ready, drain) = state.withLock { s in
                let taken = Self.take(&s, highWater: highWater)
                if taken.result == nil { s.waiter = c }
                return taken
            }
            drain?()
            if let ready { c.resume(returning: ready) }
        }
        return try result.get()
    }

    /// Reads the whole body, failing with `.tooLarge` past `limit` bytes.
    public func collect(upTo limit: Int) async throws(RequestBodyError) -> [UInt8] {
        var all: [UInt8] = []
        while let piece = try await next() {
            guard piece.count <= limit - all.count else { throw .tooLarge }
            all.append(contentsOf: piece)
        }
        return all
    }

    /// Takes a piece or the end without waiting; nil when the reader must wait.
    private func take() -> Result<[UInt8]?, RequestBodyError>? {
        let (result, drain) = state.withLock { Self.take(&$0, highWater: highWater) }
        drain?()
        return result
    }

    private static func take(
        _ s: inout State, highWater: Int
    ) -> (result: Result<[UInt8]?, RequestBodyError>?, drain: (@Sendable () -> Void)?) {
        if s.first < s.pieces.count {
            let piece = s.pieces[s.first]
            s.pieces[s.first] = []
            s.first += 1
            s.buffered -= piece.count
            if s.first == s.pieces.count {
                s.pieces.removeAll(keepingCapacity: true)
                s.first = 0
            }
            var drain: (@Sendable () -> Void)?
            if s.producerPaused && s.buffered <= highWater / 2 {
                s.producerPaused = false
                drain = s.onDrain
            }
            return (.success(piece), drain)
        }
        if let failure = s.failure { return (.failure(failure), nil) }
        if s.finished { return (.success(nil), nil) }
        return (nil, nil)
    }

    /// Reads the pieces in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let body: RequestBody

        public mutating func next() async throws(RequestBodyError) -> [UInt8]? {
            try await body.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(RequestBodyError) -> [UInt8]? {
            try await body.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }
}

/// Why a streamed request body ended before its last byte.
public enum RequestBodyError: Error, Sendable, Equatable {
    /// The connection closed, a framing error was found, or the body deadline passed; the server answered or
    /// closed by itself.
    case broken
    /// The body is larger than the reader accepts (``RequestBody/collect(upTo:)``).
    case tooLarge
}
