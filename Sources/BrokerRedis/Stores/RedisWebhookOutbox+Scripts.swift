extension RedisWebhookOutbox {
    /// Leases up to ARGV[3] deliveries due by ARGV[1]: moves each to ARGV[2] in `due`, sets its lease key to ARGV[4]
    /// for ARGV[7] ms, and returns their records. An id whose record is gone is removed.
    ///
    /// KEYS[1] due; ARGV: now, lease end, limit, token, delivery key prefix, lease key prefix, lease ms.
    static let claimScript = """
        local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
        local out = {}
        for _, id in ipairs(ids) do
          local record = redis.call('GET', ARGV[5] .. id)
          if record then
            redis.call('ZADD', KEYS[1], ARGV[2], id)
            redis.call('SET', ARGV[6] .. id, ARGV[4], 'PX', ARGV[7])
            out[#out + 1] = record
          else
            redis.call('ZREM', KEYS[1], id)
          end
        end
        return out
        """

    /// Stores the new record and due time of a delivery whose lease the caller still holds; 1 when it did, else 0.
    ///
    /// KEYS[1] due; ARGV: id, token, record, next attempt ms, delivery key prefix, lease key prefix.
    static let rescheduleScript = """
        if redis.call('GET', ARGV[6] .. ARGV[1]) ~= ARGV[2] then return 0 end
        if redis.call('EXISTS', ARGV[5] .. ARGV[1]) == 0 then return 0 end
        redis.call('SET', ARGV[5] .. ARGV[1], ARGV[3])
        redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
        redis.call('DEL', ARGV[6] .. ARGV[1])
        return 1
        """

    /// Moves a delivery whose lease the caller still holds to `dropped`, then forgets dropped deliveries older
    /// than the cutoff and the oldest beyond the number kept; 1 when it dropped it, else 0.
    ///
    /// KEYS: due, pending, dropped; ARGV: id, token, record, dropped at ms, delivery key prefix, lease key prefix,
    /// cutoff ms, number kept.
    static let dropScript = """
        if redis.call('GET', ARGV[6] .. ARGV[1]) ~= ARGV[2] then return 0 end
        if redis.call('EXISTS', ARGV[5] .. ARGV[1]) == 0 then return 0 end
        redis.call('SET', ARGV[5] .. ARGV[1], ARGV[3])
        redis.call('ZREM', KEYS[1], ARGV[1])
        redis.call('ZREM', KEYS[2], ARGV[1])
        redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
        redis.call('DEL', ARGV[6] .. ARGV[1])
        local old = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[7])
        local extra = redis.call('ZCARD', KEYS[3]) - #old - tonumber(ARGV[8])
        if extra > 0 then
          for _, id in ipairs(redis.call('ZRANGE', KEYS[3], #old, #old + extra - 1)) do old[#old + 1] = id end
        end
        for _, id in ipairs(old) do
          redis.call('DEL', ARGV[5] .. id)
          redis.call('ZREM', KEYS[3], id)
        end
        return 1
        """

    /// Replaces a delivery's record when it still is ARGV[2] and makes it pending and due now; 1 when it did, else 0.
    ///
    /// KEYS: due, pending, dropped; ARGV: id, record as read, new record, now ms, delivery key prefix, lease key prefix.
    static let replayScript = """
        if redis.call('GET', ARGV[5] .. ARGV[1]) ~= ARGV[2] then return 0 end
        redis.call('SET', ARGV[5] .. ARGV[1], ARGV[3])
        redis.call('ZREM', KEYS[3], ARGV[1])
        redis.call('ZADD', KEYS[1], ARGV[4], ARGV[1])
        redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
        redis.call('DEL', ARGV[6] .. ARGV[1])
        return 1
        """
}
