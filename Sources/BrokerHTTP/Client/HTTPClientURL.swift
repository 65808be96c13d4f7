/// The parts of an absolute `http`/`https` URL an HTTP/1.1 request needs (RFC 9110 §4.2).
public struct HTTPClientURL: Sendable, Hashable {
    /// `http` or `https`, lowercased.
    public var scheme: String
    /// The host: a name, an IPv4 address, or an IPv6 address without its brackets.
    public var host: String
    /// The port, explicit or the scheme's default.
    public var port: Int
    /// The origin-form request-target (RFC 9112 §3.2.1): path and query, `/` when empty; the fragment dropped.
    public var target: String

    /// The Host field value (RFC 9110 §7.2): the authority as sent, the port only when it is not the default.
    public var hostField: String {
        // Concatenated, not interpolated: this runs for every outbound request.
        let name = host.utf8.contains(0x3A) ? "[" + host + "]" : host
        let isDefault = (scheme == "http" && port == 80) || (scheme == "https" && port == 443)
        return isDefault ? name : name + ":" + String(port)
    }

    /// Parses `string`; nil when it is not an absolute http(s) URL without userinfo whose target holds only URI bytes.
    public init?(_ string: String) {
        let bytes = Array(string.utf8)
        guard let schemeEnd = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes.count > schemeEnd + 2, bytes[schemeEnd + 1] == 0x2F, bytes[schemeEnd + 2] == 0x2F
        else { return nil }
        // The scheme compared without case (RFC 3986 §3.1) and kept as its literal: no string made and lowercased.
        let scheme: String
        switch bytes[..<schemeEnd].map({ $0 | 0x20 }) {
        case Array("http".utf8): scheme = "http"
        case Array("https".utf8): scheme = "https"
        default: return nil
        }
        var i = schemeEnd + 3
        let authorityStart = i
        while i < bytes.count, bytes[i] != 0x2F, bytes[i] != 0x3F, bytes[i] != 0x23 { i += 1 }
        let authority = bytes[authorityStart..<i]
        // RFC 9110 §4.2.4: userinfo in an http(s) URI is deprecated; it is refused rather than sent.
        guard !authority.isEmpty, !authority.contains(0x40) else { return nil }
        var host: String
        var portText: ArraySlice<UInt8> = []
        if authority.first == 0x5B {
            guard let close = authority.firstIndex(of: 0x5D) else { return nil }
            host = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self)
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == 0x3A else { return nil }
                portText = after.dropFirst()
            }
            guard host.utf8.allSatisfy({ HTTPParser.isHexDigitOrColonOrDot($0) }), host.contains(":") else { return nil }
        } else {
            let colon = authority.firstIndex(of: 0x3A)
            let name = authority[..<(colon ?? authority.endIndex)]
            host = String(decoding: name, as: UTF8.self)
            // Lowercased only when it has a capital: most hosts are written in lowercase already.
            if name.contains(where: { $0 &- 0x41 < 26 }) { host = host.lowercased() }
            if let colon { portText = authority[(colon + 1)...] }
            guard !host.isEmpty, host.utf8.allSatisfy({ HTTPParser.isRegNameByte($0) && $0 != 0x25 }) else { return nil }
        }
        var port = scheme == "https" ? 443 : 80
        if !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy({ $0 &- 0x30 < 10 }) else { return nil }
            // At most five digits: read in place, never past an Int.
            let value = portText.reduce(0) { $0 * 10 + Int($1 &- 0x30) }
            guard value > 0, value < 65536 else { return nil }
            port = value
        }
        var end = i
        while end < bytes.count, bytes[end] != 0x23 { end += 1 }
        let targetBytes = bytes[i..<end]
        // RFC 9112 §3.2: only bytes a request-target may hold; no spaces or controls reach the request line.
        guard targetBytes.allSatisfy({ HTTPParser.isTargetByte($0) }) else { return nil }
        var target = String(decoding: targetBytes, as: UTF8.self)
        if target.isEmpty || target.first == "?" { target = "/" + target }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
    }
}

extension HTTPParser {
    /// Whether `c` may appear inside an IPv6 literal's brackets (hex digits, ":" and "." for an embedded IPv4).
    static func isHexDigitOrColonOrDot(_ c: UInt8) -> Bool {
        (c &- 0x30 < 10) || (c | 0x20) &- 0x61 < 6 || c == 0x3A || c == 0x2E
    }
}
