/// One outbound HTTP/1.1 request.
public struct HTTPClientRequest: Sendable {
    /// Where the request body comes from.
    public enum Body: Sendable {
        /// These bytes, sent with a Content-Length (none for an empty body, except `Content-Length: 0` on POST, PUT and PATCH).
        case bytes([UInt8])
        /// Pieces pulled one at a time, each after the previous one reached the kernel: with `Content-Length` when
        /// `length` is given (the pieces must add up to it exactly), chunked otherwise (RFC 9112 §7.1). A throw, or
        /// pieces that do not add up, break the request off: the connection closes without the body's end, so the
        /// server never takes a cut body for a whole one, and the call fails.
        case stream(length: Int? = nil, @Sendable () async throws -> [UInt8]?)
    }

    /// The method token, for example `POST`.
    public var method: String
    /// The absolute URL.
    public var url: String
    /// Header fields in order; `Host`, `Content-Length`, `Transfer-Encoding`, `Connection` and
    /// `Accept-Encoding` are the client's own and are dropped here.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body
    /// When set, every address the URL's host resolves to is checked before any socket is made
    /// (``AddressPolicy``); a refused one fails the call with ``HTTPClientError/addressRefused``.
    /// Connections made under a policy are pooled apart from those made under another or none.
    public var addressPolicy: AddressPolicy?

    /// Creates a request.
    public init(
        method: String, url: String, headers: [(name: String, value: String)] = [], body: Body = .bytes([]),
        addressPolicy: AddressPolicy? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.addressPolicy = addressPolicy
    }

    /// RFC 9110 §9.2.2: a request the client may send again after a connection closed before answering.
    var isIdempotent: Bool {
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": true
        default: false
        }
    }

    /// The request line and header section for `url`, or nil when a method or field cannot be sent as is;
    /// each of `defaults` goes out when the request has no field of its name.
    ///
    /// Bytes are appended as they are, with no interpolated line and no lowercased name per field: this runs for every
    /// outbound call, proxied ones among them.
    func encodedHead(for url: HTTPClientURL, defaults: [(name: String, value: String)] = []) -> [UInt8]? {
        guard !method.isEmpty, method.utf8.allSatisfy(HTTPParser.isTokenByte) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(256)
        func field(_ name: String, _ value: String) {
            Self.append(name, to: &out)
            out.append(0x3A)
            out.append(0x20)
            Self.append(value, to: &out)
            out.append(0x0D)
            out.append(0x0A)
        }
        Self.append(method, to: &out)
        out.append(0x20)
        Self.append(url.target, to: &out)
        Self.append(" HTTP/1.1\r\n", to: &out)
        field("Host", url.hostField)
        for (name, value) in headers {
            // Each field's bytes checked in place, then compared with the client's own names without case.
            var name = name
            var value = value
            let owned: Bool? = name.withUTF8 { name in
                guard !name.isEmpty, name.allSatisfy(HTTPParser.isTokenByte) else { return nil }
                return Self.clientOwnedBytes.contains { Self.equalsIgnoringCase(name, $0) }
            }
            guard let owned, value.withUTF8({ $0.allSatisfy(HTTPParser.isFieldValueByte) }) else { return nil }
            guard !owned else { continue }
            field(name, value)
        }
        for (name, value) in defaults where !headers.contains(where: { HTTPHeaders.equalsIgnoringCase($0.name, name) }) {
            field(name, value)
        }
        // RFC 9110 §12.5.3: only the identity coding is acceptable; a compressed body is never inflated here.
        field("Accept-Encoding", "identity")
        switch body {
        case .bytes(let bytes):
            if !bytes.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
                field("Content-Length", String(bytes.count))
            }
        case .stream(let length?, _):
            field("Content-Length", String(length))
        case .stream(nil, _):
            field("Transfer-Encoding", "chunked")
        }
        out.append(0x0D)
        out.append(0x0A)
        return out
    }

    /// Appends `text`'s UTF-8 as one copy of its contiguous bytes (not byte by byte through `String.UTF8View`).
    private static func append(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// Whether `name` is `lowercase` (lowercase ASCII) but for ASCII case.
    private static func equalsIgnoringCase(_ name: UnsafeBufferPointer<UInt8>, _ lowercase: [UInt8]) -> Bool {
        guard name.count == lowercase.count else { return false }
        for i in 0..<name.count {
            let byte = name[i]
            guard (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) == lowercase[i] else { return false }
        }
        return true
    }

    /// ``clientOwned`` as bytes, compared in place with each field's name.
    private static let clientOwnedBytes = clientOwned.map { Array($0.utf8) }

    /// The fields the client writes itself (the host, the framing, the connection's own and the coding), dropped from
    /// the request's.
    private static let clientOwned = ["host", "content-length", "transfer-encoding", "connection", "accept-encoding", "te", "upgrade"]
}
