#if FUZZING
import FuzzSupport
@testable import BrokerRedis

/// RESP2 replies from a Redis server (or whatever answers on its port).
extension DecoderFuzzCase {
    /// Limits small enough that short inputs reach every bound.
    static let respLimits = RESPParserLimits(
        maximumLineLength: 512, maximumBulkLength: 4096, maximumArrayLength: 64, maximumDepth: 6)

    /// The replies do not depend on how the bytes were split, and a failed parser stays failed.
    func checkRESP() {
        let bytes = input.payload
        let whole = feed([bytes[...]])
        if !bytes.isEmpty {
            let cut = Int(input.parameter) * bytes.count / 256
            require(feed([bytes[..<cut], bytes[cut...]]) == whole, "RESP replies depend on the split")
        }
        if bytes.count <= 256 {
            require(feed(bytes.indices.map { bytes[$0...$0] }) == whole, "RESP replies differ byte by byte")
        }
    }

    /// Feeds the pieces in order; the replies, and the error text if the parser failed.
    private func feed(_ pieces: [ArraySlice<UInt8>]) -> RESPOutcome {
        var parser = RESPParser(limits: Self.respLimits)
        var replies: [RESPValue] = []
        for piece in pieces {
            do {
                replies += try parser.feed(Array(piece))
            } catch {
                // RESP2: after bad input the stream has lost its framing; the parser must say so again.
                do {
                    _ = try parser.feed([0x2B, 0x4F, 0x4B, 0x0D, 0x0A])
                    fatalError("fuzz invariant broken: a failed RESP parser accepted more input")
                } catch let again {
                    require(again == error, "a failed RESP parser changed its error")
                }
                // Replies completed earlier in a failing call are dropped with it; the connection closes anyway.
                return RESPOutcome(replies: [], idle: false, error: "\(error)")
            }
        }
        for reply in replies { require(depth(of: reply) <= Self.respLimits.maximumDepth + 1, "a reply nested past the limit") }
        return RESPOutcome(replies: replies, idle: parser.isIdle, error: nil)
    }

    /// How deeply arrays nest in `value` (1 for a scalar).
    private func depth(of value: RESPValue) -> Int {
        if case .array(let elements?) = value { return 1 + (elements.map(depth(of:)).max() ?? 0) }
        return 1
    }
}

/// What a RESP stream produced: replies, then the error that stopped it, if any.
struct RESPOutcome: Equatable {
    /// The complete replies, in order; empty after an error.
    let replies: [RESPValue]
    /// Whether the stream ended at a reply boundary.
    let idle: Bool
    /// The protocol error's description, if the parser failed.
    let error: String?
}
#endif
