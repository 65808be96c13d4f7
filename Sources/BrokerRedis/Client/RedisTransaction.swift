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
    ///
    /// When the target requires replicas (with Sentinel, one by default),
    /// `WAIT <n> <ms>` follows in the same write, and a transaction fewer
    /// replicas confirm in time throws ``RedisError/unavailable(_:)``: it is
    /// applied on the primary but not acknowledged, since the primary's loss
    /// (a failover, or the split-brain moment of one, when the old primary
    /// still takes writes its replica will never see) would lose it.
    static func execute(_ commands: [RedisCommand], on connection: RedisConnection) async throws(RedisError) -> Outcome {
        let replicas = connection.target.minimumReplicas
        var pipeline = [RedisCommand("MULTI")] + commands + [RedisCommand("EXEC")]
        if replicas > 0 { pipeline.append(RedisCommand("WAIT", String(replicas), String(RedisTarget.replicaWaitMilliseconds))) }
        let replies = try await connection.send(pipeline)
        let exec = commands.count + 1
        // Replies: +OK for MULTI, +QUEUED (or a refusal) per command, then EXEC's reply (then WAIT's).
        for reply in replies[..<exec] {
            if case .error(let message) = reply { throw .server(message) }
        }
        switch replies[exec] {
        case .array(nil):
            return .conflict
        case .array(let results?):
            if let failure = results.lazy.compactMap(\.errorMessage).first { throw .server(failure) }
            if replicas > 0, let confirmed = replies.last?.integer, confirmed < replicas {
                connection.metrics.recordUnreplicatedWrite()
                throw .unavailable(
                    "redis at \(connection.url.endpoint): \(confirmed) of \(replicas) replicas confirmed the write "
                        + "within \(RedisTarget.replicaWaitMilliseconds) ms; it is not acknowledged")
            }
            return .committed(results)
        case .error(let message):
            throw .server(message)
        case .simpleString, .integer, .bulk:
            throw .protocolError("EXEC answered with something other than an array")
        }
    }
}
