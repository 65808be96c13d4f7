/// The answer to an ``HTTPClientRequest`` whose body is read piece by piece.
public struct HTTPClientResponse: Sendable {
    /// The status line and headers.
    public let head: HTTPResponseHead
    /// The body; reading it is what lets the connection read on (backpressure).
    public let body: Body

    /// The status code.
    public var status: Int { head.status }

    /// The body of a streamed response, as pieces of bytes.
    public struct Body: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        public typealias Failure = HTTPClientError
        let channel: ResponseChannel

        /// Reads the pieces in order; throws ``HTTPClientError`` when the answer breaks off.
        public struct AsyncIterator: AsyncIteratorProtocol {
            let channel: ResponseChannel

            public mutating func next() async throws(HTTPClientError) -> [UInt8]? {
                try await channel.next().get()
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async throws(HTTPClientError) -> [UInt8]? {
                try await channel.next().get()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel) }

        /// The whole body when it has already arrived, ended, and none of it was read, else nil (read it piece by
        /// piece then). Once taken, the body reads as ended and the connection is back in its pool.
        public func wholeIfArrived() -> [UInt8]? { channel.wholeBody() }

        /// Gives up the rest of the body; the connection closes.
        public func cancel() { channel.cancel() }
    }
}
