import BrokerCore

/// The pending flows a flow journal describes, rebuilt from its bytes; no I/O.
///
/// Lines are applied in order: a put makes its flow pending (replacing an
/// earlier put of the same state), a take removes it. Two kinds of damage are
/// expected after a crash or power loss and never stop the broker:
///
/// - A torn tail: bytes after the last newline are a record whose write did
///   not complete, so it was never acknowledged. They are ignored.
/// - A complete line that is not a record (zeroed or garbled blocks). It could
///   have been a take, and replaying a flow past its take would let it be used
///   twice, so every flow pending before the damaged line is cancelled; flows
///   put after it are unaffected, since their takes can only come later.
///
/// An outcome line replaces the outcome of its state; outcomes survive a
/// damaged line, since an outcome never lets anything be used twice.
struct FlowJournalReplay {
    /// A flow pending at the end of the journal: its stored shape and the line that put it.
    struct Pending: Equatable {
        /// The flow as stored (sealed secrets still sealed).
        var record: PendingFlowJSON
        /// The put line, newline included, reused verbatim when the journal is rewritten.
        var line: [UInt8]
    }

    /// The flows still pending, by state.
    private(set) var pending: [String: Pending] = [:]
    /// The last outcome line of each state, newline included, with its record.
    private(set) var outcomes: [String: (record: FlowOutcomeJSON, line: [UInt8])] = [:]
    /// How many complete lines were not records.
    private(set) var damagedLines = 0
    /// How many pending flows were cancelled because a damaged line followed them.
    private(set) var cancelledFlows = 0
    /// How many bytes after the last newline were ignored.
    private(set) var tornTailBytes = 0

    /// Replays every line of `bytes`.
    init(_ bytes: [UInt8]) {
        var replay = Self()
        replay.tornTailBytes = JournalFile.forEachLine(in: bytes) { replay.apply(line: $0) }
        self = replay
    }

    private init() {}

    /// Applies one complete line (without its newline).
    private mutating func apply(line: ArraySlice<UInt8>) {
        switch FlowJournalRecord.decode(line) {
        case .put(let record)?:
            pending[record.state] = Pending(record: record, line: Array(line) + [0x0A])
        case .take(let state)?:
            pending[state] = nil
        case .outcome(let record)?:
            outcomes[record.state] = (record, Array(line) + [0x0A])
        case nil:
            damagedLines += 1
            cancelledFlows += pending.count
            pending.removeAll()
        }
    }
}
