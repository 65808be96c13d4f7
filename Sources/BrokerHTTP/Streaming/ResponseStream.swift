/// A response body the server sends piece by piece as a handler's source yields it (a proxied download, server-sent
/// events).
///
/// The server asks for the next piece only after the previous one reached the socket, so a slow client slows the
/// source rather than filling memory. A piece is sent as soon as it is yielded; nothing waits to fill a buffer.
public struct ResponseStream: Sendable {
    /// The body's length when known in advance (`Content-Length`); nil sends it chunked.
    public var length: Int?
    /// The next piece, nil at the end; a throw ends the response abruptly (the connection closes without the
    /// last chunk, so the client sees the body break off rather than end early).
    let next: @Sendable () async throws -> [UInt8]?
    /// Called when the server gives up the rest: the client went away, the request was HEAD, or the status has no body.
    let cancel: @Sendable () -> Void

    /// A stream of `length` bytes (nil when unknown), whose pieces `next` yields; `cancel` releases the source.
    public init(
        length: Int? = nil, next: @escaping @Sendable () async throws -> [UInt8]?,
        cancel: @escaping @Sendable () -> Void = {}
    ) {
        self.length = length.map { max($0, 0) }
        self.next = next
        self.cancel = cancel
    }
}
