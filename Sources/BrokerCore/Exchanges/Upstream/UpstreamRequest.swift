/// One outbound HTTP request to a provider.
public struct UpstreamRequest: Sendable {
    /// The method, for example `POST`.
    public var method: String
    /// The absolute URL, query included.
    public var url: String
    /// Header fields in order; names are compared case-insensitively.
    public var headers: [(String, String)]
    /// The body bytes; empty for none.
    public var body: [UInt8]
    /// Whether the host must resolve to public addresses only (no loopback, private, link-local or metadata address):
    /// set for URLs a remote party chose (a remote MCP server's discovered metadata and endpoints), never for the
    /// endpoints the operator configured.
    public var publicAddressesOnly = false

    /// Creates a request; headers and body default to empty.
    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// The first value of header `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
