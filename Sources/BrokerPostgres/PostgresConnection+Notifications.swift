/// Waiting for `LISTEN` notifications on a session that runs nothing else.
extension PostgresConnection {
    /// One notification (NotificationResponse): the channel and its payload.
    struct Notification: Sendable, Equatable {
        var channel: String
        var payload: String
    }

    /// The notifications that arrive until `deadline` (monotonic nanoseconds): returns as soon as one or more came
    /// (with every one already received), or empty at the deadline. Throws when the session is lost or was never
    /// opened (run `LISTEN` first), after closing it.
    ///
    /// Only for a connection no statement runs on meanwhile (a pool's connection could be mid-statement).
    func notifications(until deadline: UInt64) async throws(PostgresError) -> [Notification] {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[Notification], PostgresError>, Never>) in
            queue.async {
                guard self.fd >= 0 else {
                    continuation.resume(returning: .failure(.connectionLost("the listening session is not open")))
                    return
                }
                var found: [Notification] = []
                var wait = deadline
                while true {
                    do throws(PostgresError) {
                        switch try self.readMessage(deadline: wait) {
                        case .notification(_, let channel, let payload):
                            found.append(Notification(channel: channel, payload: payload))
                            // Take what is already here, without waiting for more.
                            wait = 0
                        case .error(let error) where error.isFatal:
                            throw PostgresError.from(error).asSessionEnd
                        default:
                            continue
                        }
                    } catch {
                        if case .deadlineExceeded = error {
                            continuation.resume(returning: .success(found))
                        } else {
                            self.disconnect()
                            continuation.resume(returning: .failure(error))
                        }
                        return
                    }
                }
            }
        }
        return try result.get()
    }
}
