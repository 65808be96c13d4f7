#if canImport(Glibc)
import Glibc
#endif
import Dispatch

extension HTTPConnection {
    /// After an asynchronous handler answered: answer what is already buffered, then read again.
    func continueAfterHandler() {
        processInbound()
        flush()
        switch phase {
        case .idle, .head, .body:
            if peerClosed { close() } else { resumeReading() }
        case .handling, .lingering, .closed:
            break
        }
    }

    /// Writes as much pending output as the socket takes; arms the write source for the rest.
    func flush() {
        guard phase != .closed else { return }
        while pendingOffset < pending.count {
            let n = pending.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress! + pendingOffset, buffer.count - pendingOffset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                pendingOffset += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                armWrite()
                setDeadline(.write, after: server.configuration.writeTimeout)
                return
            } else {
                close()
                return
            }
        }
        if pending.capacity > 16 * 1024 { pending = [] } else { pending.removeAll(keepingCapacity: true) }
        pendingOffset = 0
        disarmWrite()
        if closeAfterWrite {
            closeAfterWrite = false
            beginLingeringClose()
        } else if deadlineKind.load(ordering: .relaxed) == DeadlineKind.write.rawValue {
            switch phase {
            case .head: setDeadline(.header, after: server.configuration.headerTimeout, from: requestStart)
            case .body: setDeadline(.body, after: server.configuration.bodyTimeout)
            case .handling: clearDeadline()
            case .idle, .lingering, .closed: setDeadline(.idle, after: server.configuration.idleTimeout)
            }
        }
        if phase == .idle || phase == .head || phase == .body, !inbound.isEmpty {
            // Output drained after back-pressure: answer what is still buffered.
            processInbound()
            if pending.count > pendingOffset { flush() }
        }
    }

    /// Half-closes our side (FIN after the response) and drains input briefly, so the
    /// peer reads the response instead of a reset (nginx's lingering close).
    func beginLingeringClose() {
        phase = .lingering
        Glibc.shutdown(fd, Int32(SHUT_WR))
        if peerClosed {
            close()
            return
        }
        setDeadline(.linger, after: 2)
        resumeReading()
    }

    private func armWrite() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: worker.queue)
            source.setEventHandler { [unowned self] in self.flush() }
            source.setCancelHandler { [self] in self.sourceCancelled() }
            liveSources += 1
            writeSource = source
            writeArmed = true
            source.activate()
        } else if !writeArmed {
            writeArmed = true
            writeSource?.resume()
        }
    }

    private func disarmWrite() {
        if writeArmed, let source = writeSource {
            writeArmed = false
            source.suspend()
        }
    }

    /// Stops read events (a handler runs, or the peer closed).
    func pauseReading() {
        if !readSuspended, let source = readSource {
            readSuspended = true
            source.suspend()
        }
    }

    /// Starts read events again.
    func resumeReading() {
        if readSuspended, !peerClosed || phase == .lingering, let source = readSource {
            readSuspended = false
            source.resume()
        }
    }

    /// Closes the connection: cancels its sources; the descriptor is closed once both are gone.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        clearDeadline()
        if let source = readSource {
            if readSuspended { readSuspended = false; source.resume() }
            source.cancel()
        }
        if let source = writeSource {
            if !writeArmed { writeArmed = true; source.resume() }
            source.cancel()
        }
        inbound = []
        pending = []
        server.connectionClosed(self)
    }

    /// A source's cancel handler ran; the last one closes the descriptor, exactly once.
    func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 {
            readSource = nil
            writeSource = nil
            Glibc.close(fd)
        }
    }

    // MARK: Deadlines

    func setDeadline(_ kind: DeadlineKind, after seconds: Double, from start: UInt64 = Monotonic.now()) {
        deadlineKind.store(kind.rawValue, ordering: .relaxed)
        deadline.store(start &+ UInt64(max(seconds, 0) * 1e9), ordering: .relaxed)
    }

    func clearDeadline() {
        deadline.store(0, ordering: .relaxed)
        deadlineKind.store(DeadlineKind.none.rawValue, ordering: .relaxed)
    }

    /// Runs on the worker queue when the sweeper saw the deadline pass.
    func deadlinePassed(now: UInt64) {
        let at = deadline.load(ordering: .relaxed)
        guard at != 0, now >= at, phase != .closed else { return }
        switch DeadlineKind(rawValue: deadlineKind.load(ordering: .relaxed)) ?? .none {
        case .none:
            return
        case .header, .body:
            // Catalogue item 21/22: a total deadline, then 408 and close.
            clearDeadline()
            let h = head
            let failure = Response.error(.requestTimeout, code: "request_timeout",
                                         message: "The request was not received in time.")
            encodeTimeout(failure, method: h?.method.rawValue ?? "-", path: h?.path ?? "-")
        case .idle, .write, .linger:
            close()
        }
    }

    /// Answers with `response`, then closes after it is written (deadline passed, or evicted at the cap).
    func encodeTimeout(_ response: Response, method: String, path: String) {
        ResponseEncoder.encode(response, includeBody: true, close: true, keepAliveHTTP10: false, into: &pending)
        let seconds = Double(Monotonic.now() &- requestStart) / 1e9
        worker.metrics.withLock { $0.record(route: nil, status: response.status.code, seconds: seconds) }
        server.observer?.requestCompleted(method: method, path: path, status: response.status.code, seconds: seconds)
        closeAfterWrite = true
        phase = .lingering
        flush()
    }
}

/// The monotonic clock in nanoseconds (CLOCK_MONOTONIC), for deadlines and latency.
enum Monotonic {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
