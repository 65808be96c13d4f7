/// RFC 9112 §6.2: a body delimited by Content-Length.
extension HTTPParser {
    /// Copies up to `remaining` body bytes; `.end` once all have arrived, which may be at once.
    mutating func parseFixedBody(_ b: Bytes, remaining: Int) -> (event: Event, consumed: Int) {
        let take = min(remaining, b.count)
        if take > 0 { body.append(contentsOf: Bytes(rebasing: b[0..<take])) }
        if take == remaining { return endRequest(consumed: take) }
        state = .fixedBody(remaining: remaining - take)
        return (.needMore, take)
    }
}
