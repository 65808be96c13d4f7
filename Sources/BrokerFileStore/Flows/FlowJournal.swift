import BrokerCore

/// What the flow journal records: the pending flows and the flow outcomes of a ``JournalFlowStore``, each with the line
/// that recorded it.
///
/// A rewrite keeps the put line of each pending flow, then the line of each outcome.
struct FlowJournal: JournalState {
    /// A pending flow and the put line that recorded it; its description names only the state.
    struct Entry: CustomStringConvertible {
        /// The flow as handed back by `take`.
        var flow: PendingFlow
        /// The put line, newline included, copied as is into a rewritten journal.
        var line: [UInt8]

        /// The state and the line's length: the line may hold an unsealed verifier.
        var description: String {
            "FlowJournal.Entry(state: \(flow.state), line: \(line.count) bytes)"
        }
    }

    /// A flow outcome and the line that recorded it.
    struct OutcomeEntry {
        /// The outcome as handed back by `outcome(state:now:)`.
        var outcome: FlowOutcome
        /// The outcome line, newline included, copied as is into a rewritten journal.
        var line: [UInt8]
    }

    /// The pending flows by state.
    private(set) var entries: [String: Entry]
    /// The flow outcomes by state, until purged after their `keepUntil`.
    private(set) var outcomes: [String: OutcomeEntry]
    /// The bytes of the put lines of `entries` and the lines of `outcomes`: what a rewrite keeps.
    private(set) var liveBytes: Int

    /// The state of a journal holding `entries` and `outcomes`.
    init(entries: [String: Entry], outcomes: [String: OutcomeEntry] = [:]) {
        self.entries = entries
        self.outcomes = outcomes
        liveBytes = entries.values.reduce(0) { $0 + $1.line.count } + outcomes.values.reduce(0) { $0 + $1.line.count }
    }

    /// The put lines of the pending flows, then the lines of the outcomes.
    func liveLines() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(liveBytes)
        for entry in entries.values { bytes += entry.line }
        for entry in outcomes.values { bytes += entry.line }
        return bytes
    }

    /// Makes `entry` pending, replacing a pending flow with the same state.
    mutating func put(_ entry: Entry) {
        if let previous = entries.updateValue(entry, forKey: entry.flow.state) { liveBytes -= previous.line.count }
        liveBytes += entry.line.count
    }

    /// Keeps `entry`, replacing the outcome of its state.
    mutating func record(_ entry: OutcomeEntry) {
        if let previous = outcomes.updateValue(entry, forKey: entry.outcome.state) { liveBytes -= previous.line.count }
        liveBytes += entry.line.count
    }

    /// Removes the pending flows of `states` and returns them.
    mutating func remove(_ states: [String]) -> [PendingFlow] {
        states.compactMap { state in
            guard let entry = entries.removeValue(forKey: state) else { return nil }
            liveBytes -= entry.line.count
            return entry.flow
        }
    }

    /// Forgets the outcomes of `states`; their lines become dead, left out of the next rewrite.
    ///
    /// No line is written: an outcome dropped for age is dropped again when a
    /// replay finds its `keepUntil` passed, and one dropped at the cap is at
    /// worst read again after a restart.
    mutating func forgetOutcomes(_ states: [String]) {
        for state in states {
            if let entry = outcomes.removeValue(forKey: state) { liveBytes -= entry.line.count }
        }
    }
}

extension JournalLog where State == FlowJournal {
    /// Appends a put of `entry`, replacing a pending flow with the same state.
    mutating func put(_ entry: FlowJournal.Entry) throws(StoreError) {
        try append(entry.line) { $0.put(entry) }
    }

    /// Appends the put line of `entry` and the line of `outcome` in one write: both are applied, or neither.
    mutating func put(_ entry: FlowJournal.Entry, recording outcome: FlowJournal.OutcomeEntry) throws(StoreError) {
        try append(entry.line + outcome.line) {
            $0.put(entry)
            $0.record(outcome)
        }
    }

    /// Appends the line of `entry`, replacing the outcome of its state.
    mutating func record(_ entry: FlowJournal.OutcomeEntry) throws(StoreError) {
        try append(entry.line) { $0.record(entry) }
    }

    /// Appends one take line for each pending flow among `states` and removes them; returns the flows removed.
    ///
    /// When the write fails nothing is removed: the flows were not used, and
    /// stay pending in memory as in the file.
    mutating func take(_ states: [String]) throws(StoreError) -> [PendingFlow] {
        let present = states.filter { state.entries[$0] != nil }
        guard !present.isEmpty else { return [] }
        return try append(present.flatMap(FlowJournalRecord.encodeTake)) { $0.remove(present) }
    }
}
