/// Bounds on what one RESP2 reply may declare, so a corrupt length cannot exhaust memory.
struct RESPParserLimits: Sendable {
    /// The longest header line (`+…`, `-…`, `:…`, `$n`, `*n`) in bytes, CR LF excluded.
    var maximumLineLength = 64 * 1024
    /// The largest bulk string: 512 MiB, Redis's own `proto-max-bulk-len` default.
    var maximumBulkLength = 512 * 1024 * 1024
    /// The most elements one array may declare.
    var maximumArrayLength = 16 * 1024 * 1024
    /// How deeply arrays may nest.
    var maximumDepth = 32
}
