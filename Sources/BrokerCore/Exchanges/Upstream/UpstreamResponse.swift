/// A provider's answer to an ``UpstreamRequest``.
public struct UpstreamResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields in order; names are compared case-insensitively.
    public var headers: [(String, String)]
    /// The body bytes.
    public var body: [UInt8]

    /// Creates a response; headers and body default to empty.
    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
