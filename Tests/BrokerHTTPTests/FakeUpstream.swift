import BrokerTestSupport
import Foundation
import Glibc
import Synchronization

/// A scripted HTTP/1.1 server on 127.0.0.1 for the client's tests: one thread per connection, requests read in turn.
///
/// `script` gets each request's head (and Content-Length or chunked body) as text and the index of
/// its connection, and says what to do. The server counts the connections it accepted, so keep-alive
/// reuse and the pool's cap are observed on the wire.
final class FakeUpstream: Sendable {
    /// What the server does with one request.
    enum Action: Sendable {
        /// Writes these bytes, then reads the next request (or closes, with `close`).
        case reply(String, close: Bool = false)
        /// Never answers; the connection stays open until the client leaves or the server stops.
        case hold
        /// Writes a head, then `piece` `count` times (as chunks with `chunked`), noting a client that hangs up.
        case stream(head: String, piece: [UInt8], count: Int, chunked: Bool)
        /// Writes `text` one byte at a time until the client leaves.
        case drip(String)
    }

    let port: Int
    private let listener: Int32
    private let script: @Sendable (String, Int) -> Action
    private let state = Mutex<(accepted: Int, requests: [String], open: [Int32], hungUp: Int, streamed: Int, ended: Int)>(
        (0, [], [], 0, 0, 0))
    private let stopped = Atomic<Bool>(false)

    init(script: @escaping @Sendable (String, Int) -> Action) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = Loopback.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 && listen(fd, 64) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw FakeUpstreamError(code: errno) }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        self.script = script
        Thread { [self] in acceptLoop() }.start()
    }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
    /// Connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }
    /// Requests read so far, in order.
    var requests: [String] { state.withLock { $0.requests } }
    /// Streamed answers whose client hung up before the body was all written.
    var hangUps: Int { state.withLock { $0.hungUp } }
    /// Connections whose serving ended (the client left, or the server closed).
    var ended: Int { state.withLock { $0.ended } }
    /// Body bytes of streamed answers the kernel accepted.
    var streamedBytes: Int { state.withLock { $0.streamed } }

    /// Stops accepting and closes every connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        // Under the lock: a descriptor leaves `open` before it is closed, so no other test's reuse of its number is hit.
        state.withLock { s in for fd in s.open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .relaxed) {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            let index = state.withLock { s -> Int in
                s.accepted += 1
                s.open.append(fd)
                return s.accepted - 1
            }
            Thread { [self] in serve(fd, index: index) }.start()
        }
    }

    private func serve(_ fd: Int32, index: Int) {
        defer {
            state.withLock { s in
                s.open.removeAll { $0 == fd }
                s.ended += 1
                close(fd)
            }
        }
        var buffer: [UInt8] = []
        while let request = readRequest(fd, &buffer) {
            state.withLock { $0.requests.append(request) }
            switch script(request, index) {
            case .reply(let text, let close):
                guard write(fd, Array(text.utf8)) else { return }
                if close { return }
            case .hold:
                var scratch = [UInt8](repeating: 0, count: 1024)
                while recv(fd, &scratch, scratch.count, 0) > 0 {}
                return
            case .stream(let head, let piece, let count, let chunked):
                guard write(fd, Array((head + "\r\n\r\n").utf8)) else { return }
                for _ in 0..<count {
                    let framed = chunked ? Array(String(piece.count, radix: 16).utf8) + [13, 10] + piece + [13, 10] : piece
                    guard write(fd, framed) else {
                        state.withLock { $0.hungUp += 1 }
                        return
                    }
                    state.withLock { $0.streamed += piece.count }
                }
                if chunked { _ = write(fd, Array("0\r\n\r\n".utf8)) }
            case .drip(let text):
                for byte in text.utf8 {
                    guard write(fd, [byte]) else { return }
                    usleep(20_000)
                }
                return
            }
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Reads one request (head, then a Content-Length or chunked body) from `fd`; nil at end of input.
    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> String? {
        var scratch = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let n = recv(fd, &scratch, scratch.count, 0)
            guard n > 0 else { return false }
            buffer.append(contentsOf: scratch[0..<n])
            return true
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == separator }
            }
            if headEnd == nil, !fill() { return nil }
        }
        let end = headEnd! + 4
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        let lower = head.lowercased()
        var bodyEnd = end
        if let range = lower.range(of: "content-length: ") {
            let digits = lower[range.upperBound...].prefix { $0.isNumber }
            bodyEnd = end + (Int(digits) ?? 0)
            while buffer.count < bodyEnd { if !fill() { return nil } }
        } else if lower.contains("transfer-encoding: chunked") {
            let terminator: [UInt8] = Array("0\r\n\r\n".utf8)
            while !(buffer.count >= end + 5 && Array(buffer[(buffer.count - 5)...]) == terminator) { if !fill() { return nil } }
            bodyEnd = buffer.count
        }
        let text = String(decoding: buffer[0..<bodyEnd], as: UTF8.self)
        buffer.removeFirst(bodyEnd)
        return text
    }
}

/// The fake upstream could not listen; `code` is errno.
struct FakeUpstreamError: Error {
    let code: Int32
}
