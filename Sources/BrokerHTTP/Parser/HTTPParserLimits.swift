/// The size limits the parser enforces while bytes arrive, before anything is buffered past them.
public struct HTTPParserLimits: Sendable, Equatable {
    /// Longest request-target accepted; longer → 414 (RFC 9112 §3 recommends ≥ 8000 octets).
    public var maxTargetBytes: Int
    /// Largest header section (after the request line, up to the blank line) accepted; larger → 431.
    public var maxHeaderBytes: Int
    /// Most header fields accepted; more → 431.
    public var maxHeaderCount: Int
    /// Largest body accepted; a larger Content-Length or chunked total → 413.
    public var maxBodyBytes: Int
    /// Budget for chunk-size lines, chunk extensions and trailers together; over it → 413 (RFC 9112 §7.1.1).
    public var maxChunkMetadataBytes: Int

    /// Creates limits; the defaults are the service's defaults.
    public init(
        maxTargetBytes: Int = 8192, maxHeaderBytes: Int = 32768, maxHeaderCount: Int = 100,
        maxBodyBytes: Int = 1 << 20, maxChunkMetadataBytes: Int = 16384
    ) {
        self.maxTargetBytes = maxTargetBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxBodyBytes = maxBodyBytes
        self.maxChunkMetadataBytes = maxChunkMetadataBytes
    }
}
