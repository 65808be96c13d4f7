import BrokerCrypto
import BrokerHTTP
import BrokerTLS
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One session with a PostgreSQL server (protocol 3.0).
///
/// The session is opened lazily (start-up, SCRAM-SHA-256 login, the read-write check) and reopened after any failure
/// that leaves the stream out of step; that start-up blocks in poll(2), bounded by a deadline, on the connection's own
/// serial `queue`, never on Swift's cooperative pool. Statements are prepared once per session under a name and reused
/// (the cache is per session, as the server's prepared statements are).
///
/// With a `worker` (the pool's connections), statement round trips run on that HTTP epoll worker
/// (PostgresConnection+Epoll.swift): the task writes its pipeline itself (non-blocking), the worker reads and parses
/// the answer when the socket is readable and resumes the task: one thread wake-up per round trip, none when the task
/// runs on that worker. Without one (the cache's LISTEN session), every socket call of a run blocks on `queue`.
public final class PostgresConnection: @unchecked Sendable {
    // @unchecked: every `var` is touched only by the one owner of the session at a time: blocks on `queue` (start-up,
    // queue-path runs), or, on the worker path, the task starting a run, then the worker once the run is handed to it
    // through `exchange`'s lock (PostgresConnection+Epoll.swift).

    /// The serial queue every socket call of this connection runs on.
    let queue: DispatchQueue
    /// Hosts, login and limits.
    let configuration: PostgresConfiguration
    /// The socket, or -1 while closed.
    var fd: Int32 = -1
    /// The TLS settings when the configuration asks for TLS (`sslmode`), shared by the pool.
    let tlsContext: TLSContext?
    /// The session's TLS over ``fd`` once negotiated: every byte after SSLRequest goes through it.
    var tls: TLSSession?
    /// Set when a TLS read must wait for the socket to be writable (a renegotiation or key update), or a write for
    /// it to be readable: the next wait asks for that too.
    var tlsReadWantsWrite = false
    var tlsWriteWantsRead = false
    /// The server the socket is connected to.
    var endpoint: PostgresConfiguration.Endpoint?
    /// Cuts the byte stream into messages.
    var framer: PostgresMessageFramer
    /// What CancelRequest names (BackendKeyData).
    var processID: Int32 = 0
    var secretKey: Int32 = 0
    /// The server's run-time parameters as ParameterStatus reported them.
    var parameters: [String: String] = [:]
    /// Prepared statements of this session: SQL text to statement name.
    var statements: [String: String] = [:]
    /// The transaction status of the last ReadyForQuery: `I` idle, `T` in a transaction, `E` a failed one.
    var transactionStatus = UInt8(ascii: "I")
    /// The number the next statement name takes.
    var nextStatementNumber = 0
    /// Scratch space for recv(2).
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// How many sessions this connection opened; a reconnect adds one.
    private(set) var sessionsOpened = 0

    /// How many prepared statements a session keeps; SQL past that runs as the unnamed statement.
    static let statementCacheLimit = 256

    /// A pipe whose read end is polled beside the socket while a statement runs: a cancelled task writes to it.
    let wakeRead: Int32
    let wakeWrite: Int32
    /// Which run a task cancellation applies to.
    let cancellation = Mutex(CancellationState())
    /// Whether waits watch ``wakeRead``: during a statement, not during a login or a cancel's own wait.
    var cancellable = false
    /// SaltedPassword per salt, shared with the pool's other connections.
    let scramKeys: SCRAMKeyCache
    /// Where each run's time and error are counted, shared with the pool's other connections.
    let metrics: PostgresMetrics
    /// The epoll worker statement round trips run on, or nil to run them blocking on `queue`.
    let worker: HTTPWorker?
    /// Who holds the session on the worker path, the run the worker waits for, the runs behind it.
    let exchange = Mutex(Exchange())
    /// The id the socket's events carry in the worker's table (0 while not attached), and the events it is watched for.
    var memberID = 0
    var watched: UInt32 = 0
    /// The deadline timer of the worker path, made on first use; only touched on the worker.
    var timer: WorkerTimer?

    /// Creates a closed connection; nothing is opened until the first statement.
    init(
        configuration: PostgresConfiguration, label: String, scramKeys: SCRAMKeyCache = SCRAMKeyCache(),
        metrics: PostgresMetrics = PostgresMetrics(), tls: TLSContext? = nil, worker: HTTPWorker? = nil
    ) {
        self.worker = worker
        self.configuration = configuration
        self.tlsContext = tls
        self.scramKeys = scramKeys
        self.metrics = metrics
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            ends = [-1, -1]
        }
        (self.wakeRead, self.wakeWrite) = (ends[0], ends[1])
        self.framer = PostgresMessageFramer(maximumMessageBytes: configuration.maximumMessageBytes)
        self.queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    deinit {
        if let worker, let timer { worker.execute { timer.cancel() } }
        disconnect()
        if wakeRead >= 0 { Glibc.close(wakeRead) }
        if wakeWrite >= 0 { Glibc.close(wakeWrite) }
    }

    /// Runs `queries` as one pipeline (Parse/Bind/Describe/Execute for each, then one Sync) before `deadline`
    /// (monotonic nanoseconds) and returns each one's rows.
    ///
    /// The queries of one pipeline run in one implicit transaction: when one fails, the server skips the rest
    /// and rolls back the earlier ones, and the first error is thrown. At the deadline a CancelRequest stops
    /// the statement and ``PostgresError/deadlineExceeded(cancelled:)`` is thrown.
    public func run(_ queries: [PostgresQuery], deadline: UInt64) async throws(PostgresError) -> [PostgresRows] {
        try await run(segments: [queries], deadline: deadline)[0]
    }

    /// Runs `segments` in one round trip, a Sync after each, so each segment is an implicit transaction of its own
    /// (or part of an explicit one) and ends before the next begins; returns each segment's rows.
    ///
    /// A failed segment skips its remaining statements and rolls back its implicit transaction, and the next
    /// segment still runs; the first error is thrown once every segment has answered. So a statement that must
    /// follow a COMMIT (a NOTIFY in a transaction of its own) travels with it, and nothing can come between them.
    public func run(segments: [[PostgresQuery]], deadline: UInt64) async throws(PostgresError) -> [[PostgresRows]] {
        let runID = cancellation.withLock { state -> Int in
            state.lastRun += 1
            return state.lastRun
        }
        if let worker {
            return try await runOnWorker(worker, segments: segments, deadline: deadline, runID: runID).get()
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[[PostgresRows]], PostgresError>, Never>) in
                queue.async {
                    defer { self.endRun() }
                    // The round trip as /metrics reports it: from the queue taking the run to its outcome,
                    // a reconnect included.
                    let started = PostgresSocket.now()
                    do throws(PostgresError) {
                        guard self.beginRun(runID) else { throw .cancelled(stopped: true) }
                        let rows = try self.runOnQueue(segments, deadline: deadline)
                        self.metrics.record(seconds: Double(PostgresSocket.now() &- started) / 1e9, error: nil)
                        continuation.resume(returning: .success(rows))
                    } catch {
                        self.metrics.record(seconds: Double(PostgresSocket.now() &- started) / 1e9, error: error)
                        continuation.resume(returning: .failure(error))
                    }
                }
            }
        } onCancel: {
            self.cancelRun(runID)
        }
        return try result.get()
    }

    /// Which run a task cancellation applies to.
    struct CancellationState {
        /// The number of the last run handed out.
        var lastRun = 0
        /// The run on the queue now, if any.
        var active: Int?
        /// The last run cancelled before it reached the queue.
        var cancelledEarly = 0
        /// Whether a wake byte may be in the pipe: written and drained under the lock, so a run that no
        /// cancellation touched reads nothing from the pipe (two read(2) calls per round trip saved).
        var wakePending = false
    }

    /// Marks `runID` as the one on the queue; false when its task was cancelled before it got there.
    private func beginRun(_ runID: Int) -> Bool {
        cancellation.withLock { state in
            if state.wakePending {
                PostgresSocket.drain(wakeRead)
                state.wakePending = false
            }
            state.active = runID
            return state.cancelledEarly != runID
        }
    }

    private func endRun() {
        cancellation.withLock { state in
            state.active = nil
            if state.wakePending {
                PostgresSocket.drain(wakeRead)
                state.wakePending = false
            }
        }
    }

    /// Called from any thread when the task awaiting `runID` is cancelled: wakes the queue's poll if that run is on it.
    private func cancelRun(_ runID: Int) {
        cancellation.withLock { state in
            guard state.active == runID else {
                state.cancelledEarly = runID
                return
            }
            // Under the lock, so the drains of beginRun and endRun see every byte written.
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            state.wakePending = true
        }
    }

    /// The server's process id for this session (0 while closed), as `pg_backend_pid()` reports it.
    public func backendProcessID() async -> Int32 {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: self.processID) } }
    }

    /// The server's run-time parameters reported so far (`server_version`, `in_hot_standby`, …).
    public func serverParameters() async -> [String: String] {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: self.parameters) } }
    }

    /// How many sessions this connection has opened (a reconnect after a failure opens another).
    public func sessionCount() async -> Int {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: self.sessionsOpened) } }
    }

    /// Closes the session (Terminate, then close), on the queue.
    func close() async {
        if let worker {
            await closeOnWorker(worker)
            return
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                if self.fd >= 0 {
                    var frontend = PostgresFrontend()
                    frontend.terminate()
                    try? self.sendAll(frontend.bytes, deadline: PostgresSocket.deadline(in: 1))
                }
                self.disconnect()
                continuation.resume()
            }
        }
    }

    private func runOnQueue(_ segments: [[PostgresQuery]], deadline: UInt64) throws(PostgresError) -> [[PostgresRows]] {
        do {
            return try runPipeline(segments, deadline: deadline)
        } catch let error where staleStatement(error.error) && error.segment == 0 && transactionStatus == UInt8(ascii: "I") {
            // A prepared statement outlived its table's shape (an ALTER, a migration) or was deallocated: its cache
            // entries are gone now, and outside an explicit transaction nothing of the first segment took effect
            // (it was one implicit transaction), so the pipeline runs once more, prepared afresh.
            do {
                return try runPipeline(segments, deadline: deadline)
            } catch {
                throw error.error
            }
        } catch {
            throw error.error
        }
    }

    /// An error of a pipeline and the segment it came from (`segments.count` when it came from none: a lost connection).
    struct SegmentError: Error {
        var error: PostgresError
        var segment: Int
    }

    /// Whether `error` says a cached statement no longer fits: 0A000 "cached plan must not change result type"
    /// or 26000 "prepared statement does not exist".
    func staleStatement(_ error: PostgresError) -> Bool {
        guard case .server(let fields) = error else { return false }
        return fields.code == "0A000" && fields.message.contains("cached plan") || fields.code == "26000"
    }

    /// Refuses what the protocol cannot carry, before anything is sent.
    func validate(_ queries: [PostgresQuery]) throws(PostgresError) {
        for query in queries where query.sql.utf8.contains(0) {
            throw .configuration("a statement holds a NUL byte")
        }
        for query in queries where query.parameters.count > Int(Int16.max) {
            throw .configuration("a statement has more than \(Int16.max) parameters")
        }
    }

    /// The bytes of a pipeline (Parse when the SQL is not prepared yet, Bind, Describe, Execute per query, a Sync per
    /// segment) and, per segment, the statement names it prepares (cached once the server confirms them).
    func encodePipeline(_ segments: [[PostgresQuery]]) -> (bytes: [UInt8], newStatements: [[Int: String]]) {
        var frontend = PostgresFrontend()
        var newStatements: [[Int: String]] = []
        for segment in segments {
            var named: [Int: String] = [:]
            // SQL prepared earlier in this same segment: parsed once, bound as often as it appears. Not across a
            // Sync: a segment that failed skipped its Parse.
            var preparedHere: [String: String] = [:]
            for (index, query) in segment.enumerated() {
                var name = statements[query.sql] ?? preparedHere[query.sql]
                if name == nil {
                    if statements.count + preparedHere.count < Self.statementCacheLimit {
                        nextStatementNumber += 1
                        name = "tb_\(nextStatementNumber)"
                        named[index] = name
                        preparedHere[query.sql] = name
                    } else {
                        // A full cache: the unnamed statement, parsed again each time.
                        name = ""
                    }
                    frontend.parse(statement: name ?? "", sql: query.sql)
                }
                frontend.bind(statement: name ?? "", parameters: query.parameters.map(\.textBytes))
                frontend.describePortal()
                frontend.execute()
            }
            frontend.sync()
            newStatements.append(named)
        }
        return (frontend.bytes, newStatements)
    }

    private func runPipeline(_ segments: [[PostgresQuery]], deadline: UInt64) throws(SegmentError) -> [[PostgresRows]] {
        let outside = segments.count
        let queries = segments.flatMap { $0 }
        guard !queries.isEmpty else { return segments.map { _ in [] } }
        do throws(PostgresError) {
            try validate(queries)
            try connectIfNeeded(deadline: deadline)
        } catch {
            throw SegmentError(error: error, segment: outside)
        }
        let (bytes, newStatements) = encodePipeline(segments)
        var written = false
        cancellable = true
        defer { cancellable = false }
        var reader = PipelineReader(segments: segments, newStatements: newStatements)
        do throws(PostgresError) {
            try writeWhileReading(bytes, deadline: deadline)
            written = true
            // A server error ends its segment only (after its ReadyForQuery); any other error is thrown at once.
            while !reader.done { try consume(readMessage(deadline: deadline), into: &reader) }
        } catch .deadlineExceeded {
            // A pipeline cut mid-message leaves the server waiting for its rest: no Sync will ever be answered.
            guard written else {
                disconnect()
                throw SegmentError(error: .deadlineExceeded(cancelled: false), segment: outside)
            }
            throw SegmentError(
                error: cancelStatement(syncs: segments.count - reader.results.count)
                    ? .deadlineExceeded(cancelled: true) : .deadlineExceeded(cancelled: false),
                segment: outside)
        } catch .cancelled {
            guard written else {
                disconnect()
                throw SegmentError(error: .cancelled(stopped: false), segment: outside)
            }
            throw SegmentError(error: .cancelled(stopped: cancelStatement(syncs: segments.count - reader.results.count)), segment: outside)
        } catch {
            if error.closesConnection { disconnect() }
            throw SegmentError(error: error, segment: outside)
        }
        if let firstError = reader.firstError { throw firstError }
        return reader.results
    }

    /// Reads the replies of one Sync: per query [ParseComplete] BindComplete (RowDescription|NoData) DataRow*
    /// (CommandComplete|EmptyQueryResponse), up to ReadyForQuery. The first error is thrown after ReadyForQuery.
    func readResults(queries: [PostgresQuery], newStatements: [Int: String], deadline: UInt64) throws(PostgresError) -> [PostgresRows] {
        var reader = PipelineReader(segments: [queries], newStatements: [newStatements])
        while !reader.done { try consume(readMessage(deadline: deadline), into: &reader) }
        if let firstError = reader.firstError { throw firstError.error }
        return reader.results[0]
    }

    /// Where the replies of a pipeline stand: the segments answered so far and the one being read. Fed one message at a
    /// time (``consume(_:into:)``), so the same reading serves a blocking wait and the worker's readiness events.
    struct PipelineReader {
        let segments: [[PostgresQuery]]
        let newStatements: [[Int: String]]
        /// Each answered segment's rows (empty for a failed one).
        private(set) var results: [[PostgresRows]] = []
        /// The first segment that failed with a server error, and that error.
        var firstError: SegmentError?
        fileprivate var rows: [PostgresRows] = []
        fileprivate var current = PostgresRows(columns: [], rows: [], commandTag: "")
        fileprivate var serverError: PostgresServerError?

        init(segments: [[PostgresQuery]], newStatements: [[Int: String]]) {
            self.segments = segments
            self.newStatements = newStatements
        }

        /// Whether every segment's ReadyForQuery arrived.
        var done: Bool { results.count >= segments.count }

        fileprivate mutating func endSegment(_ rows: [PostgresRows]) {
            results.append(rows)
            self.rows = []
            current = PostgresRows(columns: [], rows: [], commandTag: "")
            serverError = nil
        }
    }

    /// Takes one message of a pipeline's replies: per query [ParseComplete] BindComplete (RowDescription|NoData) DataRow*
    /// (CommandComplete|EmptyQueryResponse), up to each segment's ReadyForQuery. A server error ends its segment only
    /// (recorded in `reader.firstError` at its ReadyForQuery, the stream in step after it); errors that leave the
    /// stream out of step (or the session ended) are thrown.
    func consume(_ message: PostgresBackendMessage, into reader: inout PipelineReader) throws(PostgresError) {
        guard !reader.done else { return }
        let segment = reader.results.count
        let queries = reader.segments[segment]
        switch message {
        case .parseComplete:
            // A statement is cached only once the server confirmed it; one skipped after an error is not.
            if let name = reader.newStatements[segment][reader.rows.count], queries.indices.contains(reader.rows.count) {
                statements[queries[reader.rows.count].sql] = name
            }
        case .bindComplete, .noData, .parameterDescription, .closeComplete:
            break
        case .rowDescription(let columns):
            reader.current.columns = columns
        case .dataRow(let values):
            guard values.count == reader.current.columns.count || reader.current.columns.isEmpty else {
                throw .protocolError("a row has \(values.count) columns where its description has \(reader.current.columns.count)")
            }
            reader.current.rows.append(PostgresRow(values: values))
        case .commandComplete(let tag):
            reader.current.commandTag = tag
            reader.rows.append(reader.current)
            reader.current = PostgresRows(columns: [], rows: [], commandTag: "")
        case .emptyQueryResponse, .portalSuspended:
            reader.rows.append(reader.current)
            reader.current = PostgresRows(columns: [], rows: [], commandTag: "")
        case .error(let error):
            if reader.serverError == nil { reader.serverError = error }
            // FATAL and PANIC end the session: the server closes the socket after them.
            if error.isFatal {
                disconnect()
                throw PostgresError.from(error).asSessionEnd
            }
        case .readyForQuery(let status):
            transactionStatus = status
            if let error = reader.serverError {
                let mapped = PostgresError.from(error)
                if staleStatement(mapped) {
                    // Prepared afresh under new names next time (the old names stay taken on the server).
                    for query in queries { statements[query.sql] = nil }
                }
                if reader.firstError == nil { reader.firstError = SegmentError(error: mapped, segment: segment) }
                reader.endSegment([])
                return
            }
            guard reader.rows.count == queries.count else {
                throw .protocolError("\(reader.rows.count) results arrived for \(queries.count) statements")
            }
            reader.endSegment(reader.rows)
        case .notice, .notification, .parameterStatus, .negotiateProtocolVersion, .backendKeyData:
            break
        case .authentication:
            throw .protocolError("an authentication message arrived after login")
        }
    }

    /// The next message from the socket, waiting until `deadline`. ParameterStatus updates ``parameters`` on the way.
    func readMessage(deadline: UInt64) throws(PostgresError) -> PostgresBackendMessage {
        while true {
            if let message = try framer.next() {
                if case .parameterStatus(let name, let value) = message { parameters[name] = value }
                return message
            }
            // Records TLS already decrypted are not announced by the socket: read them first.
            if let tls, tls.hasBuffered {
                try receiveAvailable()
                continue
            }
            switch PostgresSocket.wait(fd, events: sessionEvents(writing: false), deadline: deadline, wake: cancellable ? wakeRead : -1) {
            case .woken:
                throw .cancelled(stopped: false)
            case .timedOut:
                throw .deadlineExceeded(cancelled: false)
            case .failed(let code):
                throw .connectionLost("poll on \(endpointText): \(PostgresSocket.errorText(code))")
            case .ready:
                try receiveAvailable()
            }
        }
    }

    /// Writes a pipeline while taking in whatever the server already answers, so a long pipeline cannot deadlock
    /// with both sides' socket buffers full (the server stops reading while its replies are not read).
    private func writeWhileReading(_ bytes: [UInt8], deadline: UInt64) throws(PostgresError) {
        // The socket of an idle session is almost always writable: the first write goes without a poll(2), and
        // the loop polls only for what that write left (or when TLS must read first).
        var offset = tls?.hasBuffered == true ? 0 : try transmit(bytes, from: 0)
        while offset < bytes.count {
            if let tls, tls.hasBuffered { try receiveAvailable() }
            switch PostgresSocket.wait(fd, events: sessionEvents(writing: true), deadline: deadline, wake: cancellable ? wakeRead : -1) {
            case .woken:
                throw .cancelled(stopped: false)
            case .timedOut:
                throw .deadlineExceeded(cancelled: false)
            case .failed(let code):
                throw .connectionLost("poll on \(endpointText): \(PostgresSocket.errorText(code))")
            case .ready(let events):
                let readable = events & Int16(POLLIN) != 0
                let writable = events & Int16(POLLOUT) != 0
                // A TLS read may wait for the socket to be writable, and a TLS write for it to be readable.
                if readable || (writable && tlsReadWantsWrite) { try receiveAvailable() }
                if writable || (readable && tlsWriteWantsRead) {
                    offset += try transmit(bytes, from: offset)
                } else if !readable && events & Int16(POLLHUP | POLLERR) != 0 {
                    throw .connectionLost("the server at \(endpointText) closed the connection")
                }
            }
        }
    }

    /// After a missed deadline or a cancelled task: sends a CancelRequest on a new connection and waits (up to the
    /// connect timeout) for the ReadyForQuery of each of the `syncs` segments not yet answered, so the session stays
    /// usable (true); else closes it.
    private func cancelStatement(syncs: Int) -> Bool {
        cancellable = false
        guard fd >= 0, let endpoint else { return false }
        let grace = PostgresSocket.deadline(in: configuration.connectTimeout)
        do throws(PostgresError) {
            try Self.sendCancelRequest(to: endpoint, processID: processID, secretKey: secretKey, tls: tlsContext, deadline: grace)
            var left = max(1, syncs)
            while true {
                if case .readyForQuery(let status) = try readMessage(deadline: grace) {
                    transactionStatus = status
                    left -= 1
                    if left == 0 { return true }
                }
            }
        } catch {
            disconnect()
            return false
        }
    }

    /// CancelRequest (protocol.sgml, "Canceling Requests in Progress"): its own connection, 16 bytes, no reply;
    /// the server closes that connection once it has read the request, which is waited for. With TLS the request
    /// goes through TLS too (after its own SSLRequest), so the session's secret key never crosses in plain text.
    static func sendCancelRequest(
        to endpoint: PostgresConfiguration.Endpoint, processID: Int32, secretKey: Int32, tls tlsContext: TLSContext?, deadline: UInt64
    ) throws(PostgresError) {
        let cancelFD = try PostgresSocket.open(endpoint, deadline: deadline)
        defer { Glibc.close(cancelFD) }
        var frontend = PostgresFrontend()
        frontend.cancelRequest(processID: processID, secretKey: secretKey)
        if let tlsContext {
            let session = try Self.negotiateTLS(fd: cancelFD, endpoint: endpoint, context: tlsContext, deadline: deadline)
            defer { session.close() }
            var offset = 0
            while offset < frontend.bytes.count {
                let step = frontend.bytes.withUnsafeBytes { session.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
                let events: Int16
                switch step {
                case .done(let count):
                    offset += count
                    continue
                case .wantRead: events = Int16(POLLIN)
                case .wantWrite: events = Int16(POLLOUT)
                case .end, .failed: throw .connectionLost("the cancel connection to \(endpoint) closed")
                }
                guard case .ready = PostgresSocket.wait(cancelFD, events: events, deadline: deadline) else {
                    throw .deadlineExceeded(cancelled: false)
                }
            }
        } else {
            try PostgresSocket.writeAll(cancelFD, frontend.bytes, deadline: deadline, endpoint: endpoint.description)
        }
        var scratch = [UInt8](repeating: 0, count: 16)
        while case .ready = PostgresSocket.wait(cancelFD, events: Int16(POLLIN), deadline: deadline) {
            let count = recv(cancelFD, &scratch, scratch.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { break }
        }
    }

    /// `host:port` of the current server, for messages.
    var endpointText: String { endpoint?.description ?? "postgres" }

    /// Closes the socket and forgets the session's state (its prepared statements died with it).
    func disconnect() {
        leaveWorker()
        tls?.close()
        tls = nil
        tlsReadWantsWrite = false
        tlsWriteWantsRead = false
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
        framer.reset()
        statements.removeAll()
        parameters.removeAll()
        processID = 0
        secretKey = 0
    }

    /// Counts a session opened by ``connect(deadline:)``.
    func recordSessionOpened() {
        sessionsOpened += 1
    }
}

extension PostgresError {
    /// A FATAL error met mid-session: a server shutting down, or one that ended the session otherwise.
    var asSessionEnd: PostgresError {
        switch self {
        case .serverShutdown, .authenticationFailed, .connectionLost: return self
        case .server(let error): return .connectionLost("the server ended the session: \(error)")
        default: return self
        }
    }
}
