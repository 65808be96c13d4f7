import Foundation
import Glibc
import Synchronization

/// A one-connection HTTP/1.1 server on 127.0.0.1 that streams a large body piece by piece and notes when the client hangs up.
///
/// The body is `piece` written `count` times, so a 64 MiB answer never exists in
/// memory at once. With `chunked`, each piece goes out as one RFC 9112 §7.1 chunk
/// and no Content-Length is sent; the head is the caller's, ending before the blank line.
final class StreamingHTTPServer: Sendable {
    /// What the server managed to write before the body ended or the client went away.
    struct Outcome: Sendable {
        /// Body bytes (chunk framing excluded) the kernel accepted.
        let bodyBytesWritten: Int
        /// Whether a write failed because the client closed the connection.
        let clientHungUp: Bool
    }

    /// The port the kernel chose.
    let port: UInt16
    private let listener: Int32
    private let request = Mutex<String?>(nil)
    private let result = Mutex<(outcome: Outcome?, waiter: CheckedContinuation<Outcome, Never>?)>((nil, nil))

    /// Binds 127.0.0.1:0 and serves the first connection on a background thread.
    init(head: String, piece: [UInt8], count: Int, chunked: Bool = false) throws {
        (listener, port) = try LocalHTTPServer.listenOnLoopback(backlog: 4)
        let thread = Thread { [self] in serve(head: head, piece: piece, count: count, chunked: chunked) }
        thread.start()
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String {
        "http://127.0.0.1:\(port)\(path)"
    }

    /// The request head the client sent, once it has arrived.
    var receivedRequest: String? { request.withLock { $0 } }

    /// Waits until the server has stopped writing, and says how far it got.
    func finished() async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = result.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Stops accepting; a connection being served ends on its own.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(head: String, piece: [UInt8], count: Int, chunked: Bool) {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return report(Outcome(bodyBytesWritten: 0, clientHungUp: false)) }
        defer { close(connection) }
        // A client that stops reading without closing must not hold this thread forever.
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        readHead(connection)
        var written = 0
        guard write(connection, Array((head + "\r\n\r\n").utf8)) else {
            return report(Outcome(bodyBytesWritten: 0, clientHungUp: true))
        }
        let frame = chunked ? Array((String(piece.count, radix: 16) + "\r\n").utf8) : []
        for _ in 0..<count {
            let ok = write(connection, frame) && write(connection, piece) && write(connection, chunked ? Array("\r\n".utf8) : [])
            guard ok else { return report(Outcome(bodyBytesWritten: written, clientHungUp: true)) }
            written += piece.count
        }
        if chunked { _ = write(connection, Array("0\r\n\r\n".utf8)) }
        report(Outcome(bodyBytesWritten: written, clientHungUp: false))
    }

    private func report(_ outcome: Outcome) {
        let waiter = result.withLock { state -> CheckedContinuation<Outcome, Never>? in
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    /// Writes all of `bytes`; false once the client has gone (or stalled past the send timeout).
    private func write(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Reads until the blank line that ends the request head (the tests send no body).
    private func readHead(_ connection: Int32) {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < 65536 {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
            if String(decoding: data, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        request.withLock { $0 = String(decoding: data, as: UTF8.self) }
    }
}
