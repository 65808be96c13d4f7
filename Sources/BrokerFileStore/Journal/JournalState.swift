/// The in-memory state an append-only journal records: what its lines describe, and the lines a rewrite keeps.
///
/// A conforming type changes only through ``JournalLog``, after the line
/// recording the change was written, so memory and file always agree.
protocol JournalState: Sendable {
    /// The total length of the lines ``liveLines()`` returns: what a rewrite would keep.
    var liveBytes: Int { get }

    /// Every line a rewrite keeps, each with its newline, in the order the rewrite writes them.
    func liveLines() -> [UInt8]
}
