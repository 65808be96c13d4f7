#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension RedisConnection {
    /// Writes `commands` without reading their replies, within the timeout; on the queue, with the connection open.
    ///
    /// For a subscribed connection, where replies and pushed messages arrive
    /// interleaved and are read by ``read(waitingUpTo:)``. Any failure closes the connection.
    func write(_ commands: [RedisCommand]) throws(RedisError) {
        let request = RESPEncoder.encode(commands)
        let deadline = RedisSocket.monotonicNow() + timeoutNanoseconds
        var written = 0
        do throws(RedisError) {
            while written < request.count {
                switch RedisSocket.wait(fd, events: Int16(POLLOUT), deadline: deadline, now: RedisSocket.monotonicNow) {
                case .timedOut:
                    throw RedisError.timeout
                case .failed(let code):
                    throw RedisError.unavailable("poll on \(url.endpoint): \(RedisSocket.errorText(code))")
                case .ready(let revents):
                    if revents & Int16(POLLERR | POLLHUP) != 0 {
                        throw RedisError.unavailable("redis at \(url.endpoint) closed the connection")
                    }
                    written += try transmit(request, from: written)
                }
            }
        } catch {
            disconnect()
            throw error
        }
    }

    /// Waits up to `nanoseconds` for input and returns the values it completed, possibly none; on the queue.
    ///
    /// A closed or failed socket throws ``RedisError/unavailable(_:)`` and closes the connection.
    func read(waitingUpTo nanoseconds: UInt64) throws(RedisError) -> [RESPValue] {
        let deadline = RedisSocket.monotonicNow() + nanoseconds
        do throws(RedisError) {
            // Records OpenSSL already decrypted do not make the socket readable.
            if let tlsSession, tlsSession.hasBuffered { return try receiveTLS(tlsSession) }
            switch RedisSocket.wait(fd, events: Int16(POLLIN), deadline: deadline, now: RedisSocket.monotonicNow) {
            case .timedOut:
                return []
            case .failed(let code):
                throw RedisError.unavailable("poll on \(url.endpoint): \(RedisSocket.errorText(code))")
            case .ready:
                return try receive()
            }
        } catch {
            disconnect()
            throw error
        }
    }
}
