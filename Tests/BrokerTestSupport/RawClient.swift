import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client on a real socket, for sending exact bytes and reading exact answers.
public final class RawClient: @unchecked Sendable {
    // @unchecked: one test drives a client at a time; the async reads below only move
    // the blocking recv off Swift's cooperative threads, which the server's handlers need.
    /// One parsed response.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields in order.
        public var headers: [(String, String)]
        /// The body bytes.
        public var body: [UInt8]
        /// The first field called `name`, compared without case.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// The connected socket.
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:port with a receive timeout (a bound on a failing test: an answer that never comes).
    public init(port: Int, timeout: Double = 60) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { Glibc.close(fd); throw POSIXError(.ECONNREFUSED) }
        setTimeout(timeout)
    }

    deinit { Glibc.close(fd) }

    /// Sets the receive timeout.
    public func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Sends every byte (stops early only when the peer is gone).
    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Half-closes the sending side.
    public func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes; returns 0 on EOF, -1 on timeout or error.
    ///
    /// A signal handled by the test process (the children the suites start exit and raise SIGCHLD) interrupts
    /// `recv` with EINTR, and a socket with `SO_RCVTIMEO` is never restarted (signal(7)), whatever `SA_RESTART`
    /// says; that is not the peer's doing, so the read starts again.
    @discardableResult
    public func fill() -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var n: Int
        repeat {
            n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        } while n < 0 && errno == EINTR
        if n > 0 { buffer.append(contentsOf: chunk[0..<n]) }
        lastError = n < 0 ? errno : 0
        return n
    }

    /// The `errno` of the last read that failed (EAGAIN: the receive timeout ran out), 0 after one that did not.
    public private(set) var lastError: Int32 = 0

    /// Reads one response (Content-Length framed, or to EOF without it); nil on EOF/timeout first.
    /// The blocking reads run off Swift's cooperative threads, which the server's handlers need.
    public func readResponse(head: Bool = false) async -> Reply? {
        await offPool { self.blockingReadResponse(head: head) }
    }

    /// True when the server closed the connection (EOF) within the timeout, with nothing more sent.
    public func readsEOF() async -> Bool {
        await offPool { self.blockingReadsEOF() }
    }

    /// ``readResponse(head:)`` on the calling thread.
    public func blockingReadResponse(head: Bool = false) -> Reply? {
        while true {
            if let end = headEnd() {
                let headText = String(decoding: buffer[0..<end], as: UTF8.self)
                var lines = headText.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst()
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
                let headers = lines.filter { !$0.isEmpty }.map { line -> (String, String) in
                    let colon = line.firstIndex(of: ":")!
                    return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) }
                let bodyStart = end + 4
                let bodiless = head || status < 200 || status == 204 || status == 304
                if !bodiless, headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1 == "chunked" }) {
                    buffer.removeFirst(bodyStart)
                    guard let body = readChunkedBody() else { return nil }
                    return Reply(status: status, headers: headers, body: body)
                }
                if !bodiless && length == nil {
                    // RFC 9112 §6.3: without a length, the body runs to the end of the connection.
                    while fill() > 0 {}
                    let body = Array(buffer[bodyStart...])
                    buffer.removeAll()
                    return Reply(status: status, headers: headers, body: body)
                }
                let bodyLength = bodiless ? 0 : (length ?? 0)
                while buffer.count < bodyStart + bodyLength {
                    if fill() <= 0 { return nil }
                }
                let body = Array(buffer[bodyStart..<bodyStart + bodyLength])
                buffer.removeFirst(bodyStart + bodyLength)
                return Reply(status: status, headers: headers, body: body)
            }
            if fill() <= 0 { return nil }
        }
    }

    /// ``readsEOF()`` on the calling thread.
    public func blockingReadsEOF() -> Bool {
        while true {
            let n = fill()
            if n == 0 { return true }
            if n < 0 { return false }
        }
    }

    /// Reads a chunked body (RFC 9112 §7.1) from the front of the buffer, trailers dropped; nil when it breaks off.
    private func readChunkedBody() -> [UInt8]? {
        var body: [UInt8] = []
        while true {
            guard let line = readLine(), let size = Int(line.split(separator: ";")[0], radix: 16) else { return nil }
            if size == 0 {
                while let trailer = readLine(), !trailer.isEmpty {}
                return body
            }
            while buffer.count < size + 2 {
                if fill() <= 0 { return nil }
            }
            body += buffer[0..<size]
            guard buffer[size] == 13, buffer[size + 1] == 10 else { return nil }
            buffer.removeFirst(size + 2)
        }
    }

    /// One CRLF-ended line from the front of the buffer, without its CRLF.
    private func readLine() -> String? {
        while true {
            if let cr = buffer.indices.dropLast().first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 }) {
                let line = String(decoding: buffer[0..<cr], as: UTF8.self)
                buffer.removeFirst(cr + 2)
                return line
            }
            if fill() <= 0 { return nil }
        }
    }

    /// Reads until the unread bytes contain `bytes`; false when the connection ends first.
    public func blockingRead(until bytes: [UInt8]) -> Bool {
        while true {
            if buffer.count >= bytes.count,
                (0...(buffer.count - bytes.count)).contains(where: { buffer[$0..<($0 + bytes.count)].elementsEqual(bytes) })
            {
                return true
            }
            if fill() <= 0 { return false }
        }
    }

    /// Reads until the server closes, keeping nothing: the number of bytes received (what was unread included).
    public func drainCounting() -> Int {
        var total = buffer.count
        buffer.removeAll()
        var scratch = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &scratch, scratch.count, 0)
            guard n > 0 else { return total }
            total += n
        }
    }

    /// Bytes received but not yet returned as a response.
    public var unread: [UInt8] { buffer }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }
}
