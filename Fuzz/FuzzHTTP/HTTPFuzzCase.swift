import BrokerHTTP
import FuzzSupport

/// One fuzz input, run through the parser in every way the server could receive it.
///
/// Each delivery checks the parser's contract event by event (``ParserRun``);
/// across deliveries the outcome must not depend on how the bytes were split
/// (hyper #4081), and across limits a tighter limit may only cut the same
/// outcome short with 413, 414 or 431.
struct HTTPFuzzCase {
    /// Limits small enough that inputs of a few KiB reach every limit check.
    static let tightLimits = HTTPParserLimits(
        maxTargetBytes: 200, maxHeaderBytes: 600, maxHeaderCount: 8, maxBodyBytes: 1024, maxChunkMetadataBytes: 256)
    /// Inputs up to this size are also delivered one byte at a time.
    static let byteByByteLimit = 384

    /// The raw bytes, possibly several pipelined requests.
    let bytes: [UInt8]

    /// Runs every delivery under the service's default limits and under tight ones; stops the process on a violation.
    func check() {
        let standard = checkDeliveries(limits: HTTPParserLimits())
        let tight = checkDeliveries(limits: Self.tightLimits)
        // Whatever tight limits accept, the defaults accept identically.
        require(standard.requests.starts(with: tight.requests), "tight limits framed a request differently")
        if !tight.ending.isLimitFailure {
            require(standard == tight, "tight limits changed an outcome without a limit failure")
        }
    }

    /// The whole delivery's outcome, after checking that the split deliveries agree with it.
    private func checkDeliveries(limits: HTTPParserLimits) -> RunOutcome {
        let whole = ParserRun.deliver(bytes, cuts: [], limits: limits)
        for cuts in cutSets() {
            let split = ParserRun.deliver(bytes, cuts: cuts, limits: limits)
            require(split == whole, "delivery cut at \(cuts.prefix(3))… differs from the whole input")
        }
        return whole
    }

    /// Where to cut the input: at a position derived from its first byte, at two derived from its
    /// first and last bytes, and, for short inputs, everywhere.
    private func cutSets() -> [[Int]] {
        guard bytes.count > 1, let first = bytes.first, let last = bytes.last else { return [] }
        let n = bytes.count
        let one = 1 + Int(first) * (n - 1) / 256
        let other = 1 + Int(last) * (n - 1) / 256
        var sets = [[one], [min(one, other), max(one, other)]]
        if n <= Self.byteByByteLimit { sets.append(Array(1..<n)) }
        return sets
    }
}
