extension RedisWebhookOutbox {
    /// Leases up to ARGV[3] deliveries due by ARGV[1]: moves each to ARGV[2] in `due`, sets its lease key to ARGV[4]
    /// for ARGV[7] ms, and returns their records. An id whose record is gone is removed.
    ///
    /// ARGV[8] on are holds, four each: a receiver URL, how many of its deliveries may be leased, until when (ms)
    /// the others found due are set aside (their score in `due` moved there, the record untouched), and the enqueue
    /// time (ms) before which a delivery has spent its retry window and is leased anyway. Every id looked at leaves
    /// the due range (leased, set aside or removed), so each pass reads from the start; at most 2,048 are set aside
    /// per call, and the next call goes on.
    ///
    /// KEYS[1] due; ARGV: now, lease end, limit, token, delivery key prefix, lease key prefix, lease ms, holds….
    static let claimScript = """
        local limit = tonumber(ARGV[3])
        local holds = {}
        local holding = false
        for i = 8, #ARGV, 4 do
          holds[ARGV[i]] = {left = tonumber(ARGV[i + 1]), untilms = ARGV[i + 2], ended = tonumber(ARGV[i + 3])}
          holding = true
        end
        local out = {}
        local budget = 2048
        while #out < limit and budget > 0 do
          local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit - #out)
          if #ids == 0 then break end
          for _, id in ipairs(ids) do
            local record = redis.call('GET', ARGV[5] .. id)
            if record then
              local take = true
              if holding then
                local delivery = cjson.decode(record)
                local hold = holds[delivery['url']]
                if hold and tonumber(delivery['enqueued_at']) >= hold.ended then
                  if hold.left > 0 then
                    hold.left = hold.left - 1
                  else
                    take = false
                    budget = budget - 1
                    redis.call('ZADD', KEYS[1], hold.untilms, id)
                  end
                end
              end
              if take then
                redis.call('ZADD', KEYS[1], ARGV[2], id)
                redis.call('SET', ARGV[6] .. id, ARGV[4], 'PX', ARGV[7])
                out[#out + 1] = record
              end
            else
              redis.call('ZREM', KEYS[1], id)
            end
          end
        end
        return out
        """

    /// Up to ARGV[4] members of sorted set KEYS[1] past member ARGV[2] at score ARGV[1] (or from the start when ARGV[1]
    /// is empty), ascending when ARGV[3] is `asc`, else descending, with their scores: `[id, score, id, score…]`.
    ///
    /// Members of equal score are ordered by their bytes, as Redis orders them. When the cursor's member is still at
    /// its score its rank gives the place at once; otherwise the members of that score are read to find it.
    static let pageScript = """
        local key, score, member, asc, limit = KEYS[1], ARGV[1], ARGV[2], ARGV[3] == 'asc', tonumber(ARGV[4])
        if score == '' then
          if asc then return redis.call('ZRANGE', key, 0, limit - 1, 'WITHSCORES') end
          return redis.call('ZREVRANGE', key, 0, limit - 1, 'WITHSCORES')
        end
        local current = redis.call('ZSCORE', key, member)
        if current and tonumber(current) == tonumber(score) then
          if asc then
            local rank = redis.call('ZRANK', key, member) + 1
            return redis.call('ZRANGE', key, rank, rank + limit - 1, 'WITHSCORES')
          end
          local rank = redis.call('ZREVRANK', key, member) + 1
          return redis.call('ZREVRANGE', key, rank, rank + limit - 1, 'WITHSCORES')
        end
        local out = {}
        local ties
        if asc then ties = redis.call('ZRANGEBYSCORE', key, score, score) else ties = redis.call('ZREVRANGEBYSCORE', key, score, score) end
        for _, id in ipairs(ties) do
          if #out / 2 >= limit then return out end
          if (asc and id > member) or ((not asc) and id < member) then
            out[#out + 1] = id
            out[#out + 1] = score
          end
        end
        local rest
        if asc then
          rest = redis.call('ZRANGEBYSCORE', key, '(' .. score, '+inf', 'WITHSCORES', 'LIMIT', 0, limit - #out / 2)
        else
          rest = redis.call('ZREVRANGEBYSCORE', key, '(' .. score, '-inf', 'WITHSCORES', 'LIMIT', 0, limit - #out / 2)
        end
        for _, value in ipairs(rest) do out[#out + 1] = value end
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
