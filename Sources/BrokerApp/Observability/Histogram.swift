/// Observations counted into buckets, with their sum: the data of one Prometheus histogram series.
struct Histogram: Sendable, Equatable {
    /// Upper bounds of the buckets, ascending; the `+Inf` bucket is implied.
    let bounds: [Double]
    /// Non-cumulative counts: one per bound, then the `+Inf` bucket.
    private(set) var counts: [UInt64]
    /// The sum of every observed value.
    private(set) var sum: Double = 0

    /// An empty histogram over `bounds`.
    init(bounds: [Double]) {
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Counts `value` into the first bucket whose bound is at least it.
    mutating func observe(_ value: Double) {
        var b = 0
        while b < bounds.count && value > bounds[b] { b += 1 }
        counts[b] &+= 1
        sum += value
    }
}
