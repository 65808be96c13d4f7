#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension RedisConnection {
    /// Writes every command, then reads one reply per command; on the queue, with the connection open.
    ///
    /// Replies are read while the request is still being written, so a long
    /// pipeline cannot deadlock with both sides' buffers full. The whole exchange
    /// must finish within the timeout. Any failure closes the connection.
    func exchange(_ commands: [RedisCommand]) throws(RedisError) -> [RESPValue] {
        let request = RESPEncoder.encode(commands)
        let deadline = RedisSocket.monotonicNow() + timeoutNanoseconds
        var replies: [RESPValue] = []
        replies.reserveCapacity(commands.count)
        var written = 0
        do throws(RedisError) {
            while replies.count < commands.count {
                let writing = written < request.count
                // Records OpenSSL already decrypted do not make the socket readable: take them first.
                if let tlsSession, tlsSession.hasBuffered {
                    replies += try receiveTLS(tlsSession)
                    continue
                }
                switch RedisSocket.wait(fd, events: exchangeEvents(writing: writing), deadline: deadline, now: RedisSocket.monotonicNow) {
                case .timedOut:
                    throw RedisError.timeout
                case .failed(let code):
                    throw RedisError.unavailable("poll on \(url.endpoint): \(RedisSocket.errorText(code))")
                case .ready(let revents):
                    // A TLS read that wanted the socket writable is retried once it is.
                    if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 || (tlsReadWantsWrite && revents & Int16(POLLOUT) != 0) {
                        replies += try receive()
                    }
                    if writing, revents & Int16(tlsWriteWantsRead ? POLLIN : POLLOUT) != 0 {
                        written += try transmit(request, from: written)
                    }
                }
            }
            guard replies.count == commands.count else {
                throw RedisError.protocolError("\(replies.count) replies arrived for \(commands.count) commands")
            }
        } catch {
            disconnect()
            throw error
        }
        return replies
    }

    /// Reads what the socket (or the TLS session) has and returns the replies it completed.
    func receive() throws(RedisError) -> [RESPValue] {
        if let tlsSession { return try receiveTLS(tlsSession) }
        let count = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            return try readBuffer.withUnsafeBufferPointer { (buffer) throws(RedisError) in
                try parser.feed(UnsafeBufferPointer(rebasing: buffer[0..<count]))
            }
        }
        if count == 0 { throw .unavailable("redis at \(url.endpoint) closed the connection") }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return [] }
        throw .unavailable("read from \(url.endpoint): \(RedisSocket.errorText(code))")
    }

    /// Writes as much of `request` from `offset` as the socket takes; returns how many bytes went out.
    func transmit(_ request: [UInt8], from offset: Int) throws(RedisError) -> Int {
        if let tlsSession { return try transmitTLS(tlsSession, request, from: offset) }
        let count = request.withUnsafeBytes { bytes in
            // MSG_NOSIGNAL: a peer that closed must give EPIPE here, not kill the process with SIGPIPE.
            Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if count >= 0 { return count }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return 0 }
        throw .unavailable("write to \(url.endpoint): \(RedisSocket.errorText(code))")
    }
}
