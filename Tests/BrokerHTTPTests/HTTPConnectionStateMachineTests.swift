import Testing

@testable import BrokerHTTP

/// Every transition of the connection state machine, with no socket and no sleep: events
/// carry an injected clock value and the tests read the actions, the output and the deadline.
@Suite struct HTTPConnectionStateMachineTests {
    typealias Machine = HTTPConnectionStateMachine
    typealias Deadline = HTTPConnectionStateMachine.Deadline

    static let second: UInt64 = 1_000_000_000
    /// The accept time of every machine here.
    static let t0: UInt64 = 1_000 * second
    static let timeouts = Machine.Timeouts(header: 10, body: 30, write: 20, idle: 75, linger: 2)

    static func make(limits: HTTPParserLimits = HTTPParserLimits(), at now: UInt64 = t0) -> Machine {
        Machine(
            limits: limits, timeouts: timeouts, remoteAddress: "192.0.2.1",
            date: { Array("Tue, 01 Dec 2026 00:00:00 GMT".utf8) }, refusals: TestServer.refusals, now: now)
    }

    static func ok(_ text: String = "ok") -> Response { Response.json(.ok, "\"\(text)\"") }

    // MARK: Idle and reading

    @Test func anAcceptedConnectionIsIdleWithTheIdleDeadlineFromTheAccept() {
        let m = Self.make()
        guard case .idle = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == Deadline(kind: .idle, at: Self.t0 + 75 * Self.second))
        #expect(!m.hasUnsentOutput)
        #expect(Machine.waitingSince(m.deadline, timeouts: Self.timeouts) == Self.t0)
    }

    @Test func theFirstByteOfAHeadStartsTheTotalHeaderDeadline() {
        var m = Self.make()
        let t1 = Self.t0 + Self.second
        #expect(m.feed("GET /healthz HT", at: t1).isReadMore)
        guard case .readingHead = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == Deadline(kind: .header, at: t1 + 10 * Self.second))
        // More bytes do not move a total deadline (a drip is cut at 10 s from its first byte).
        #expect(m.feed("GET /healthz HTTP/1.1\r\nX-Drip: 1\r\n", at: t1 + 5 * Self.second).isReadMore)
        #expect(m.deadline == Deadline(kind: .header, at: t1 + 10 * Self.second))
    }

    @Test func aCompleteHeadMovesFromTheHeaderDeadlineToTheBodyDeadline() throws {
        var m = Self.make()
        let request = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n"
        #expect(m.feed(String(request.prefix(10)), at: Self.t0).isReadMore)
        let t1 = Self.t0 + 4 * Self.second
        #expect(m.feed(request + "a", at: t1).isReadMore)
        guard case .readingBody(let head) = m.state else { Issue.record("state \(m.state)"); return }
        #expect(head.path == "/echo")
        #expect(m.deadline == Deadline(kind: .body, at: t1 + 30 * Self.second))
        // The body completes: the handler gets it, and the time counts from the head's first byte.
        let done = try #require(m.feed("bc", at: t1).request)
        #expect(done.body == Array("abc".utf8))
        let answered = m.handlerFinished(Self.ok(), route: 0, now: t1)
        #expect(answered?.seconds == 4)
    }

    @Test func aWholeRequestCallsTheHandlerWithNoDeadlineRunning() throws {
        var m = Self.make()
        let request = try #require(m.feed("GET /healthz?x=1 HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        #expect(request.head.path == "/healthz")
        #expect(request.remoteAddress == "192.0.2.1")
        guard case .inHandler = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == .none)
        #expect(Machine.waitingSince(m.deadline, timeouts: Self.timeouts) == nil)
        // Input is not parsed while a handler runs, so pipelined answers keep their order.
        #expect(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).isPause)
        if case .none = m.readingAction {} else { Issue.record("reading resumes during a handler") }
    }

    @Test func keepAliveAnswerReturnsToIdleWithAFreshIdleDeadline() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        let t1 = Self.t0 + 3 * Self.second
        let answered = m.handlerFinished(Self.ok(), route: 0, now: t1)
        let completed = try #require(answered)
        #expect(completed.status == 200 && completed.method == "GET" && completed.path == "/healthz" && completed.route == 0)
        #expect(completed.seconds == 3)
        guard case .idle = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == Deadline(kind: .idle, at: t1 + 75 * Self.second))
        let out = m.takeOutput()
        #expect(out.hasPrefix("HTTP/1.1 200 OK\r\nDate: Tue, 01 Dec 2026 00:00:00 GMT\r\n"))
        #expect(!out.contains("Connection:"))
        if case .resumeReading = m.readingAction {} else { Issue.record("reading does not resume") }
    }

    @Test func pipelinedRequestsAreAnsweredOneAtATimeInOrder() throws {
        var m = Self.make()
        let two = "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n"
        var bytes = Array(two.utf8)
        let (first, used) = m.parse(bytes, at: Self.t0)
        guard case .callHandler(let a) = first else { Issue.record("\(first)"); return }
        #expect(a.head.path == "/a")
        #expect(used == two.utf8.count / 2)
        _ = m.handlerFinished(Self.ok("a"), route: 0, now: Self.t0)
        bytes.removeFirst(used)
        let (second, _) = m.parse(bytes, at: Self.t0)
        guard case .callHandler(let b) = second else { Issue.record("\(second)"); return }
        #expect(b.head.path == "/b")
        _ = m.handlerFinished(Self.ok("b"), route: 0, now: Self.t0)
        let out = m.takeOutput()
        let ia = try #require(out.range(of: "\"a\"")), ib = try #require(out.range(of: "\"b\""))
        #expect(ia.lowerBound < ib.lowerBound)
    }

    @Test func http10KeepAliveIsConfirmedAndHTTP10WithoutItCloses() throws {
        var kept = Self.make()
        _ = try #require(kept.feed("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", at: Self.t0).request)
        _ = kept.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        #expect(kept.takeOutput().contains("Connection: keep-alive\r\n"))
        var closed = Self.make()
        _ = try #require(closed.feed("GET / HTTP/1.0\r\n\r\n", at: Self.t0).request)
        _ = closed.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        #expect(closed.takeOutput().contains("Connection: close\r\n"))
        guard case .closing = closed.state else { Issue.record("state \(closed.state)"); return }
    }

    // MARK: Closing and lingering

    @Test func connectionCloseAnswersThenHalfClosesAndLingersUntilEndOfInput() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /x HTTP/1.1\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        guard case .closing = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == .none)
        #expect(m.discardsInput)
        // RFC 9112 §9.6: nothing after a close is read as a request.
        #expect(m.feed("GET /x HTTP/1.1\r\n\r\n", at: Self.t0).isDiscard)
        #expect(m.takeOutput().contains("Connection: close\r\n"))
        let t1 = Self.t0 + Self.second
        guard case .halfCloseAndDrain = m.writeCompleted(now: t1) else { Issue.record("no half-close"); return }
        guard case .lingering = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == Deadline(kind: .linger, at: t1 + 2 * Self.second))
        guard case .close = m.peerClosedInput() else { Issue.record("end of input does not close"); return }
        #expect(m.isClosed)
    }

    @Test func theLingerDeadlineCloses() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        _ = m.takeOutput()
        _ = m.writeCompleted(now: Self.t0)
        guard case .none = m.deadlinePassed(now: Self.t0 + Self.second) else { Issue.record("closed early"); return }
        guard case .close = m.deadlinePassed(now: Self.t0 + 2 * Self.second) else { Issue.record("lingers on"); return }
        #expect(m.isClosed)
    }

    @Test func aFramingErrorAnswersItsStatusAndDiscardsTheRest() throws {
        var m = Self.make()
        let (action, _) = m.parse(
            Array(
                "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n".utf8),
            at: Self.t0)
        guard case .responded(let completed) = action else { Issue.record("\(action)"); return }
        #expect(completed.status == 400 && completed.route == nil)
        #expect(m.feed("more", at: Self.t0).isDiscard)
        let out = m.takeOutput()
        #expect(out.hasPrefix("HTTP/1.1 400 ") && out.contains("Connection: close\r\n"))
        #expect(!out.contains("smuggled"))
    }

    @Test func aBodyOverTheLimitIs413BeforeItArrives() throws {
        var m = Self.make(limits: HTTPParserLimits(maxBodyBytes: 10))
        let action = m.feed("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 999999\r\n\r\n", at: Self.t0)
        guard case .responded(let completed) = action else { Issue.record("\(action)"); return }
        #expect(completed.status == 413)
        guard case .closing = m.state else { Issue.record("state \(m.state)"); return }
    }

    // MARK: Expect: 100-continue

    @Test func anAcceptedExpectationSends100ContinueBeforeTheBody() throws {
        var m = Self.make()
        let t1 = Self.t0 + Self.second
        let action = m.feed("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n", at: t1)
        guard case .checkExpectation(let head) = action else { Issue.record("\(action)"); return }
        #expect(head.path == "/echo")
        #expect(m.deadline == Deadline(kind: .body, at: t1 + 30 * Self.second))
        m.expectationAccepted()
        #expect(m.takeOutput() == "HTTP/1.1 100 Continue\r\n\r\n")
        let request = try #require(m.feed("abc", at: t1).request)
        #expect(request.body == Array("abc".utf8))
    }

    @Test func noContinueWhenTheBodyCameWithTheHead() throws {
        var m = Self.make()
        let action = m.feed("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc", at: Self.t0)
        guard case .checkExpectation = action else { Issue.record("\(action)"); return }
        m.expectationAccepted()
        #expect(!m.hasUnsentOutput)
    }

    @Test func aRefusedExpectationAnswersAtOnceAndCloses() {
        var m = Self.make()
        let action = m.feed("POST /nowhere HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n", at: Self.t0)
        guard case .checkExpectation = action else { Issue.record("\(action)"); return }
        let completed = m.expectationRefused(Response(status: .notFound), route: nil, now: Self.t0)
        #expect(completed.status == 404 && completed.path == "/nowhere")
        guard case .closing = m.state else { Issue.record("state \(m.state)"); return }
        let out = m.takeOutput()
        #expect(out.hasPrefix("HTTP/1.1 404 ") && !out.contains("100 Continue") && out.contains("Connection: close\r\n"))
        #expect(m.feed("abc", at: Self.t0).isDiscard)
    }

    // MARK: Deadlines

    @Test func theHeaderDeadlineAnswers408AndCloses() throws {
        var m = Self.make()
        _ = m.feed("GET / HTTP/1.1\r\nX: ", at: Self.t0)
        guard case .none = m.deadlinePassed(now: Self.t0 + 10 * Self.second - 1) else { Issue.record("early"); return }
        guard case .write(let completed) = m.deadlinePassed(now: Self.t0 + 10 * Self.second) else { Issue.record("no 408"); return }
        #expect(completed.status == 408 && completed.method == "-")
        guard case .closing = m.state else { Issue.record("state \(m.state)"); return }
        let out = m.takeOutput()
        #expect(out.hasPrefix("HTTP/1.1 408 ") && out.contains("Connection: close\r\n"))
    }

    @Test func theBodyDeadlineAnswers408AndCloses() throws {
        var m = Self.make()
        let t1 = Self.t0 + Self.second
        #expect(m.feed("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc", at: t1).isReadMore)
        guard case .readingBody = m.state else { Issue.record("state \(m.state)"); return }
        #expect(m.deadline == Deadline(kind: .body, at: t1 + 30 * Self.second))
        guard case .write(let completed) = m.deadlinePassed(now: t1 + 30 * Self.second) else { Issue.record("no 408"); return }
        #expect(completed.status == 408 && completed.path == "/echo" && completed.seconds == 30)
        #expect(m.takeOutput().hasPrefix("HTTP/1.1 408 "))
    }

    @Test func theIdleDeadlineCloses() {
        var m = Self.make()
        guard case .close = m.deadlinePassed(now: Self.t0 + 75 * Self.second) else { Issue.record("not closed"); return }
        #expect(m.isClosed)
        #expect(m.deadline == .none)
    }

    @Test func aBlockedWriteRunsTheWriteDeadlineThenCloses() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        m.wrote(5)
        let t1 = Self.t0 + Self.second
        m.writeBlocked(now: t1)
        #expect(m.deadline == Deadline(kind: .write, at: t1 + 20 * Self.second))
        #expect(Machine.waitingSince(m.deadline, timeouts: Self.timeouts) == t1)
        guard case .close = m.deadlinePassed(now: t1 + 20 * Self.second) else { Issue.record("not closed"); return }
    }

    @Test func aWriteThatCompletesGivesTheStateItsDeadlineBack() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        // The next head starts arriving while the answer is blocked.
        let t1 = Self.t0 + Self.second
        #expect(m.feed("GET /next HTTP/1.1\r\n", at: t1).isReadMore)
        m.writeBlocked(now: t1 + 1)
        #expect(m.deadline.kind == .write)
        _ = m.takeOutput()
        guard case .parseBuffered = m.writeCompleted(now: t1 + 3 * Self.second) else { Issue.record("no parse"); return }
        // The header deadline still runs from the head's first byte.
        #expect(m.deadline == Deadline(kind: .header, at: t1 + 10 * Self.second))
    }

    @Test func aWriteThatCompletesDuringAHandlerLeavesNoDeadline() throws {
        var m = Self.make()
        let two = Array("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /slow HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        let (first, used) = m.parse(two, at: Self.t0)
        guard case .callHandler = first else { Issue.record("\(first)"); return }
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        m.writeBlocked(now: Self.t0)
        #expect(m.deadline.kind == .write)
        // The second request's handler runs while the first answer waits for the socket; no
        // deadline runs during a handler (the next flush that blocks arms the write deadline again).
        #expect(m.parse(Array(two[used...]), at: Self.t0).action.request?.head.path == "/slow")
        #expect(m.deadline == .none)
        _ = m.takeOutput()
        guard case .none = m.writeCompleted(now: Self.t0 + 1) else { Issue.record("parses during a handler"); return }
        #expect(m.deadline == .none)
    }

    @Test func muchUnsentOutputPausesParsingUntilTheSocketTakesIt() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET /big HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        let big = Response(status: .ok, body: [UInt8](repeating: 0x78, count: Machine.backPressureLimit + 1))
        _ = m.handlerFinished(big, route: 0, now: Self.t0)
        #expect(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).isPause)
        _ = m.takeOutput()
        guard case .parseBuffered = m.writeCompleted(now: Self.t0) else { Issue.record("no parse"); return }
        #expect(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request != nil)
    }

    // MARK: Eviction

    @Test func theLongestWaitingIdleConnectionIsTheOneToEvict() {
        let older = Self.make(at: Self.t0)
        var newer = Self.make(at: Self.t0 + 5 * Self.second)
        let since = [older, newer].map { Machine.waitingSince($0.deadline, timeouts: Self.timeouts) ?? .max }
        #expect(since == [Self.t0, Self.t0 + 5 * Self.second])
        // A head still arriving has waited from its first byte, whatever its deadline kind.
        _ = newer.feed("GET", at: Self.t0 + 6 * Self.second)
        #expect(Machine.waitingSince(newer.deadline, timeouts: Self.timeouts) == Self.t0 + 6 * Self.second)
    }

    @Test func anEvictedIdleConnectionCloses() {
        var m = Self.make()
        guard case .close = m.evict(chosenWithDeadline: m.deadline.word, now: Self.t0) else { Issue.record("not closed"); return }
        #expect(m.isClosed)
    }

    @Test func anEvictedSlowRequestGets503() {
        var m = Self.make()
        _ = m.feed("GET / HTTP/1.1\r\nX-Drip: ", at: Self.t0)
        guard case .write(let completed) = m.evict(chosenWithDeadline: m.deadline.word, now: Self.t0 + 1) else {
            Issue.record("no 503"); return
        }
        #expect(completed.status == 503)
        let out = m.takeOutput()
        #expect(out.hasPrefix("HTTP/1.1 503 ") && out.contains("over_capacity") && out.contains("Connection: close\r\n"))
    }

    @Test func aPublishedDeadlineKeepsItsKindAndNeverComesEarly() {
        for kind in [Deadline.Kind.idle, .header, .body, .write, .linger] {
            for at: UInt64 in [1, 7, 8, 1_000_000_123, UInt64.max - 3] {
                let back = Deadline(word: Deadline(kind: kind, at: at).word)
                #expect(back.kind == kind)
                #expect(back.at >= at && back.at - at < 8)
            }
        }
        #expect(Deadline.none.word == 0)
        #expect(Deadline(word: 0) == .none)
    }

    @Test func aConnectionThatMovedOnSinceItWasChosenIsNotEvicted() throws {
        // Steps of a second: published deadlines are kept to 8 ns, and two of one kind never fall that close.
        var m = Self.make()
        let chosen = m.deadline.word
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0 + Self.second).request)
        guard case .none = m.evict(chosenWithDeadline: chosen, now: Self.t0 + 2 * Self.second) else {
            Issue.record("evicted in its handler")
            return
        }
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0 + 3 * Self.second)
        guard case .none = m.evict(chosenWithDeadline: chosen, now: Self.t0 + 4 * Self.second) else {
            Issue.record("evicted after moving on")
            return
        }
        guard case .idle = m.state else { Issue.record("state \(m.state)"); return }
    }

    // MARK: Shutdown

    @Test func shutdownClosesAnIdleConnectionAtOnce() {
        var m = Self.make()
        guard case .close = m.serverShuttingDown() else { Issue.record("not closed"); return }
        #expect(m.isClosed)
    }

    @Test func shutdownLetsAnInFlightRequestFinishThenCloses() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        guard case .none = m.serverShuttingDown() else { Issue.record("handler cut short"); return }
        #expect(m.draining)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        #expect(m.takeOutput().contains("Connection: close\r\n"))
        guard case .closing = m.state else { Issue.record("state \(m.state)"); return }
    }

    @Test func shutdownLetsAHeadStillArrivingFinish() throws {
        var m = Self.make()
        _ = m.feed("GET / HTTP/1.1\r\n", at: Self.t0)
        guard case .none = m.serverShuttingDown() else { Issue.record("request cut short"); return }
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        #expect(m.takeOutput().contains("Connection: close\r\n"))
    }

    // MARK: The peer closing

    @Test func endOfInputMidHeadCloses() {
        var m = Self.make()
        _ = m.feed("GET / HT", at: Self.t0)
        guard case .close = m.peerClosedInput() else { Issue.record("not closed"); return }
        #expect(m.isClosed)
    }

    @Test func endOfInputWithAnAnswerUnsentWaitsForTheWrite() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        guard case .pauseReading = m.peerClosedInput() else { Issue.record("closed with output unsent"); return }
        #expect(!m.isClosed && m.peerClosed)
    }

    @Test func endOfInputDuringAHandlerClosesAfterItsAnswer() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        guard case .pauseReading = m.peerClosedInput() else { Issue.record("handler cut short"); return }
        let answered = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        let completed = try #require(answered)
        #expect(completed.status == 200)
        #expect(m.takeOutput().contains("Connection: close\r\n"))
        guard case .halfCloseAndClose = m.writeCompleted(now: Self.t0) else { Issue.record("no close"); return }
        #expect(m.isClosed)
    }

    @Test func endOfInputWhileClosingClosesAtOnce() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", at: Self.t0).request)
        _ = m.handlerFinished(Self.ok(), route: 0, now: Self.t0)
        guard case .close = m.peerClosedInput() else { Issue.record("not closed"); return }
        #expect(m.isClosed && !m.hasUnsentOutput)
    }

    @Test func aHandlerAnswerAfterTheConnectionClosedIsDropped() throws {
        var m = Self.make()
        _ = try #require(m.feed("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n", at: Self.t0).request)
        guard case .close = m.close() else { Issue.record("not closed"); return }
        #expect(m.handlerFinished(Self.ok(), route: 0, now: Self.t0) == nil)
        #expect(!m.hasUnsentOutput)
    }

    @Test func aClosedMachineIgnoresEveryEvent() {
        var m = Self.make()
        _ = m.close()
        guard case .none = m.close() else { Issue.record("closed twice"); return }
        guard case .none = m.deadlinePassed(now: .max) else { Issue.record("deadline after close"); return }
        guard case .none = m.evict(chosenWithDeadline: 0, now: .max) else { Issue.record("evicted after close"); return }
        guard case .none = m.peerClosedInput() else { Issue.record("end of input after close"); return }
        guard case .none = m.serverShuttingDown() else { Issue.record("shutdown after close"); return }
        guard case .none = m.writeCompleted(now: .max) else { Issue.record("write after close"); return }
        #expect(m.feed("GET / HTTP/1.1\r\n\r\n", at: Self.t0).isDiscard)
    }
}

/// Test conveniences: feed text, read and acknowledge the output.
extension HTTPConnectionStateMachine {
    mutating func parse(_ bytes: [UInt8], at now: UInt64) -> (action: ParseAction, consumed: Int) {
        bytes.withUnsafeBytes { parse($0, now: now) }
    }

    mutating func feed(_ text: String, at now: UInt64) -> ParseAction {
        parse(Array(text.utf8), at: now).action
    }

    /// The unsent output as text, marked sent.
    mutating func takeOutput() -> String {
        let (count, text) = withUnsentOutput { ($0.count, String(decoding: $0, as: UTF8.self)) }
        wrote(count)
        return text
    }
}

extension HTTPConnectionStateMachine.ParseAction {
    var isReadMore: Bool { if case .readMore = self { return true } else { return false } }
    var isPause: Bool { if case .pause = self { return true } else { return false } }
    var isDiscard: Bool { if case .discardRest = self { return true } else { return false } }
    var request: Request? { if case .callHandler(let request) = self { return request } else { return nil } }
}
