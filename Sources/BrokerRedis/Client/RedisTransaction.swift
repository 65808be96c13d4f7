/// Runs a `MULTI`/`EXEC` block on a held connection and reads its outcome.
///
/// Redis applies a transaction whole or not at all when it is refused before
/// `EXEC` (a `WATCH`ed key changed, a command was refused at queueing, such as
/// `NOPERM` or `OOM`, or the connection dropped). Those are the failures a
/// store meets, so a store write is never half-applied.
enum RedisTransaction {
    /// What `EXEC` did.
    enum Outcome: Sendable, Equatable {
        /// Every command ran; these are their replies.
        case committed([RESPValue])
        /// A `WATCH`ed key changed; nothing ran. Read again and retry.
        case conflict
    }

    /// Sends `MULTI`, `commands` and `EXEC` in one pipeline on `connection`.
    ///
    /// Throws ``RedisError/server(_:)`` with the first refusal when a command
    /// was refused while queueing (`EXEC` then discards everything) or failed
    /// while running.
    static func execute(_ commands: [RedisCommand], on connection: RedisConnection) async throws(RedisError) -> Outcome {
        let replies = try await connection.send([RedisCommand("MULTI")] + commands + [RedisCommand("EXEC")])
        // Replies: +OK for MULTI, +QUEUED (or a refusal) per command, then EXEC's reply.
        for reply in replies.dropLast() {
            if case .error(let message) = reply { throw .server(message) }
        }
        switch replies[replies.count - 1] {
        case .array(nil):
            return .conflict
        case .array(let results?):
            if let failure = results.lazy.compactMap(\.errorMessage).first { throw .server(failure) }
            return .committed(results)
        case .error(let message):
            throw .server(message)
        case .simpleString, .integer, .bulk:
            throw .protocolError("EXEC answered with something other than an array")
        }
    }
}
