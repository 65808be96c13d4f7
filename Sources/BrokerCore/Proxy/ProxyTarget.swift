/// The outbound URL of an API proxy call: a provider's API base joined with the caller's path and query.
///
/// The caller's part is input from the internet that must never move the call off the provider's API: not to
/// another host (an absolute URL, a scheme-relative `//host`, a userinfo `@`), not above the base's path prefix
/// (`..` and `.` segments, raw or percent-encoded, and encoded slashes or backslashes a server may decode before
/// routing), and not into another request (control bytes). Each refusal is a fixed sentence, never the input.
///
/// Everything is checked byte by byte against RFC 3986's grammar; nothing is normalised, so what was checked is
/// exactly what goes out.
public enum ProxyTarget {
    /// Why no outbound URL was made.
    public enum Failure: Error, Sendable, Equatable {
        /// The configured base is not an `https://` URL without userinfo, query or fragment; `reason` says which.
        case invalidBase(reason: String)
        /// The caller's path or query is refused; `reason` is a fixed sentence.
        case refused(reason: String)
    }

    /// A checked API base: its origin (`https://host[:port]`, or `http://` where allowed; host lowercased) and path prefix (no trailing `/`).
    public struct Base: Sendable, Equatable {
        /// The scheme and the authority, as configured but for the case of the scheme and host.
        public let origin: String
        /// The host alone (lowercased; an IPv6 literal keeps its brackets).
        public let host: String
        /// The path prefix, empty or starting with `/`, without a trailing `/`.
        public let prefix: String

        /// Checks `url` as an API base: `https://`, or `http://` too with `allowingHTTP` (a provider on the operator's
        /// own network, which the providers file marks `api_allow_private`).
        public init(_ url: String, allowingHTTP: Bool = false) throws(Failure) {
            let bytes = Array(url.utf8)
            func hasScheme(_ text: String) -> Bool {
                let scheme = Array(text.utf8)
                return bytes.count > scheme.count && bytes[..<scheme.count].map({ $0 | 0x20 }) == scheme
            }
            let plain = allowingHTTP && hasScheme("http://")
            guard plain || hasScheme("https://") else {
                throw .invalidBase(reason: allowingHTTP ? "must be an https:// or http:// URL" : "must be an https:// URL")
            }
            let scheme = Array((plain ? "http://" : "https://").utf8)
            let rest = bytes[scheme.count...]
            let authorityEnd = rest.firstIndex(where: { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 }) ?? rest.endIndex
            let authority = Array(rest[..<authorityEnd])
            let tail = Array(rest[authorityEnd...])
            guard !authority.contains(0x40) else { throw .invalidBase(reason: "must not carry userinfo") }
            guard !tail.contains(0x3F), !tail.contains(0x23) else {
                throw .invalidBase(reason: "must not carry a query or fragment")
            }
            guard let host = Self.host(of: authority) else { throw .invalidBase(reason: "has no valid host") }
            var prefix = tail
            while prefix.last == 0x2F { prefix.removeLast() }
            if let reason = ProxyTarget.pathRefusal(prefix, allowEmpty: true) {
                throw .invalidBase(reason: "path prefix: \(reason)")
            }
            self.host = host
            let port = authority.count > host.utf8.count ? String(decoding: authority[host.utf8.count...], as: UTF8.self) : ""
            origin = (plain ? "http://" : "https://") + host + port
            self.prefix = String(decoding: prefix, as: UTF8.self)
        }

        /// The lowercased host of `authority` when it is a DNS name, IPv4 address or bracketed IPv6 literal with an
        /// optional port (1 to 65535); nil otherwise.
        static func host(of authority: [UInt8]) -> String? {
            var hostEnd = authority.endIndex
            if authority.first == 0x5B {  // [IPv6]
                guard let close = authority.firstIndex(of: 0x5D), close > 1,
                    authority[1..<close].allSatisfy({ isHex($0) || $0 == 0x3A || $0 == 0x2E })
                else { return nil }
                hostEnd = close + 1
            } else {
                hostEnd = authority.firstIndex(of: 0x3A) ?? authority.endIndex
                let name = authority[..<hostEnd]
                guard !name.isEmpty,
                    name.allSatisfy({ isAlphaNumeric($0) || $0 == 0x2D || $0 == 0x2E }),
                    name.first != 0x2E, name.first != 0x2D, !zip(name, name.dropFirst()).contains(where: { $0 == 0x2E && $1 == 0x2E })
                else { return nil }
            }
            if hostEnd < authority.endIndex {
                let digits = authority[(hostEnd + 1)...]
                guard authority[hostEnd] == 0x3A, (1...5).contains(digits.count), digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                    let port = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(port)
                else { return nil }
            }
            return String(decoding: authority[..<hostEnd], as: UTF8.self).lowercased()
        }
    }

    /// `base` + its prefix + `path` (+ `?` + `query` when given and not empty).
    ///
    /// `path` must start with a single `/`; `query` comes without its `?`.
    public static func url(base: Base, path: String, query: String?) throws(Failure) -> String {
        let raw = Array(path.utf8)
        guard raw.first == 0x2F else { throw .refused(reason: "the path must start with /") }
        guard raw.count < 2 || raw[1] != 0x2F else { throw .refused(reason: "the path must not start with //") }
        if let reason = pathRefusal(raw, allowEmpty: false) { throw .refused(reason: reason) }
        let hasQuery = query.map { !$0.isEmpty } ?? false
        if hasQuery, let query, let reason = queryRefusal(Array(query.utf8)) { throw .refused(reason: reason) }
        // Joined in one allocation of the final size.
        var out = ""
        out.reserveCapacity(
            base.origin.utf8.count + base.prefix.utf8.count + path.utf8.count + (hasQuery ? 1 + (query?.utf8.count ?? 0) : 0))
        out += base.origin
        out += base.prefix
        out += path
        if hasQuery, let query {
            out += "?"
            out += query
        }
        // Belt and braces: whatever was joined, the host read back from the result is the base's, byte for byte
        // (only the authority's bytes are copied out to be read).
        let utf8 = out.utf8
        let schemeLength = base.origin.utf8.starts(with: "http://".utf8) ? 7 : 8
        let start = utf8.index(utf8.startIndex, offsetBy: schemeLength, limitedBy: utf8.endIndex) ?? utf8.endIndex
        let authorityEnd = utf8[start...].firstIndex(where: { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 }) ?? utf8.endIndex
        guard Base.host(of: Array(utf8[start..<authorityEnd])) == base.host else {
            throw .refused(reason: "the URL would leave the API's host")
        }
        return out
    }

    /// Why `path` (empty, or `/segment` repeated) is refused; nil when it is acceptable.
    static func pathRefusal(_ path: [UInt8], allowEmpty: Bool) -> String? {
        if path.isEmpty { return allowEmpty ? nil : "the path is empty" }
        guard path.first == 0x2F else { return "the path must start with /" }
        let segments = path.dropFirst().split(separator: 0x2F, omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            // A trailing `/` is an empty last segment, which APIs use; an empty one inside is `//`.
            if segment.isEmpty {
                if index == segments.count - 1 && !allowEmpty { continue }
                return "the path must not contain an empty segment"
            }
            guard let decoded = decode(segment, context: "path") else { return "the path has a refused byte" }
            // RFC 3986 §5.2.4: `.` and `..` are removed by whoever resolves the URL, raw or (RFC 3986 §2.3, §6.2.2.2)
            // once decoded, since an unreserved character may be percent-encoded.
            if decoded == [0x2E] || decoded == [0x2E, 0x2E] { return "the path must not contain . or .. segments" }
        }
        return nil
    }

    /// Why `query` (without its `?`) is refused; nil when it is acceptable.
    static func queryRefusal(_ query: [UInt8]) -> String? {
        decode(query, context: "query") == nil ? "the query has a refused byte" : nil
    }

    /// `component` percent-decoded once, or nil when it holds a byte outside RFC 3986's `pchar` (or, in a query, `/`
    /// and `?`; RFC 3986 §3.3, §3.4), a malformed escape, an encoded slash, backslash or control byte, or an escape
    /// that decodes to another escape of a dot, slash or backslash (for a server that decodes twice).
    static func decode(_ component: [UInt8], context: String) -> [UInt8]? {
        decode(component[...], context: context)
    }

    /// ``decode(_:context:)`` of a part of a larger array (a path's segment), read in place rather than copied out.
    static func decode(_ component: ArraySlice<UInt8>, context: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(component.count)
        var index = component.startIndex
        let end = component.endIndex
        while index < end {
            let byte = component[index]
            if byte == 0x25 {
                guard index + 2 < end, let high = hexValue(component[index + 1]),
                    let low = hexValue(component[index + 2])
                else { return nil }
                let value = high << 4 | low
                // Encoded `/` and `\` split segments for servers that decode first (and Windows ones that read `\` as `/`).
                guard value >= 0x20, value != 0x7F, value != 0x2F, value != 0x5C else { return nil }
                out.append(value)
                index += 3
                continue
            }
            guard isPathChar(byte) || (context == "query" && (byte == 0x2F || byte == 0x3F)) else { return nil }
            // `@` is refused raw: with a parser that takes the wrong `/` for the authority's end it names userinfo.
            guard byte != 0x40 else { return nil }
            out.append(byte)
            index += 1
        }
        // A second decoding must not produce a dot, slash or backslash either.
        var scan = 0
        while scan + 2 < out.count {
            if out[scan] == 0x25, let high = hexValue(out[scan + 1]), let low = hexValue(out[scan + 2]),
                [0x2E, 0x2F, 0x5C].contains(high << 4 | low)
            {
                return nil
            }
            scan += 1
        }
        return out
    }

    /// RFC 3986 §3.3 `pchar` (unreserved, sub-delims, `:` and `@`), without `%`, which ``decode(_:context:)`` reads.
    static func isPathChar(_ byte: UInt8) -> Bool {
        if isAlphaNumeric(byte) { return true }
        switch byte {
        case 0x2D, 0x2E, 0x5F, 0x7E: return true  // - . _ ~
        case 0x21, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x3B, 0x3D: return true  // ! $ & ' ( ) * + , ; =
        case 0x3A, 0x40: return true  // : @
        default: return false
        }
    }

    static func isAlphaNumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    static func isHex(_ byte: UInt8) -> Bool { hexValue(byte) != nil }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}
