#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The header fields an API proxy call forwards: the caller's towards the provider, the provider's back to the caller.
///
/// A proxy is an intermediary (RFC 9110 §3.7): hop-by-hop fields describe one connection and are never forwarded
/// (RFC 9110 §7.6.1), framing is the sending side's own (RFC 9112 §6), and credentials stay on the side they belong to:
/// the caller's `Authorization` names the broker's API key, never the provider's account, and the provider's cookies
/// would tie every caller to one browser session of the account. Fields arrive from the internet, so a name that is not
/// an RFC 9110 §5.1 token or a value with bytes outside RFC 9110 §5.5's field-value is dropped; nothing here traps.
public enum ProxyHeaders {
    /// One header field as it travels: its name as written and its value.
    public typealias Field = (name: String, value: String)

    /// Fields (lowercase) never forwarded in either direction: hop-by-hop (RFC 9110 §7.6.1), framing (RFC 9112 §6.1,
    /// §6.2; the broker frames each message itself), and `Expect` (RFC 9110 §10.1.1), which the broker answers itself.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "content-length", "expect",
    ]

    /// Caller fields (lowercase) never sent to the provider: the broker's API key (`Authorization`, RFC 9110 §11.6.2)
    /// and the caller's other credentials (`Proxy-Authorization` §11.7.2, `Cookie` RFC 6265 §5.4); `Host`, which the
    /// outbound client writes for the provider's origin (RFC 9110 §7.2).
    static let requestDropped: Set<String> = ["authorization", "proxy-authorization", "cookie", "host"]

    /// Provider fields (lowercase) never returned: cookies (RFC 6265 §4.1, RFC 2965's `Set-Cookie2`), and the
    /// authentication fields meant for the broker as the provider's client (`Proxy-Authenticate` RFC 9110 §11.7.1,
    /// `Proxy-Authentication-Info` §11.7.3, `Authentication-Info` §11.6.3, which may carry a next credential).
    static let responseDropped: Set<String> = [
        "set-cookie", "set-cookie2", "proxy-authenticate", "proxy-authentication-info", "authentication-info",
    ]

    /// The prefix of the broker's own request fields (`Broker-Account`, …), which select the account and are never forwarded.
    static let brokerPrefix = "broker-"

    /// The caller's fields to send on to the provider, in order: without credentials, `Host`, hop-by-hop and framing
    /// fields (and every field `Connection` names), the broker's `Broker-*` fields, and malformed fields.
    /// `own` (the fields the broker writes itself) follow them, and replace a caller's field of the same name.
    public static func request(_ fields: [Field], replacedBy own: [Field] = []) -> [Field] {
        // One pass, as for the provider's fields: no set of `Connection` options, no closure per field, one array.
        let named = namedOptions(fields, beyond: requestDroppedBytes)
        var kept: [Field] = []
        kept.reserveCapacity(fields.count + own.count)
        for field in fields {
            // A well-formed name is ASCII, so comparing its bytes without case is what lowercasing it would be.
            guard isWellFormed(field) else { continue }
            switch listing(of: field.name) {
            case .hopByHop, .requestDropped: continue
            case .responseDropped, .date, .requestID, nil: break
            }
            guard named.isEmpty || !isListed(field.name, named), !startsIgnoringCase(field.name, with: brokerPrefixBytes),
                !own.contains(where: { equalsIgnoringCase($0.name, field.name) })
            else { continue }
            kept.append(field)
        }
        kept.append(contentsOf: own)
        return kept
    }

    /// The provider's fields to return to the caller, in order: without cookies, authentication fields for the broker,
    /// hop-by-hop and framing fields (and every field `Connection` names), the provider's `Date`, malformed fields, and
    /// any field whose value contains one of `secrets` (the credential the broker placed, should the provider echo it,
    /// in a `Location` say). The provider's `X-Request-Id` comes back as `Provider-Request-Id`.
    ///
    /// `Date` is a singleton (RFC 9110 §6.6.1) and the broker writes its own, as its origin of the answer it sends
    /// (nginx does the same by default); `X-Request-Id` is the broker's request id, the one its logs and audit trail
    /// name, so the provider's travels under another name for the provider's support to find its side of the call.
    ///
    /// Secrets shorter than 4 bytes are not looked for: they would match ordinary values, and no provider issues them.
    public static func response(_ fields: [Field], secrets: [String] = []) -> [Field] {
        // One pass per field with no set, closure or copy of a secret per call: this runs on every proxied answer.
        let named = namedOptions(fields, beyond: responseDroppedBytes)
        var kept: [Field] = []
        kept.reserveCapacity(fields.count)
        for field in fields {
            guard isWellFormed(field) else { continue }
            let listed = listing(of: field.name)
            switch listed {
            case .hopByHop, .responseDropped, .date: continue
            case .requestDropped, .requestID, nil: break
            }
            guard named.isEmpty || !isListed(field.name, named) else { continue }
            var echoed = false
            for secret in secrets where secret.utf8.count >= 4 && contains(field.value, secret: secret) {
                echoed = true
                break
            }
            guard !echoed else { continue }
            kept.append(listed == .requestID ? (providerRequestID, field.value) : field)
        }
        return kept
    }

    /// The name the provider's `X-Request-Id` comes back under.
    public static let providerRequestID = "Provider-Request-Id"

    /// The lowercase options of every `Connection` field (RFC 9110 §7.6.1) that name a field neither the hop-by-hop
    /// list nor `dropped` would drop anyway (`keep-alive` names the hop-by-hop `Keep-Alive`): usually none, and then
    /// nothing is allocated.
    private static func namedOptions(_ fields: [Field], beyond dropped: [[UInt8]]) -> [[UInt8]] {
        var named: [[UInt8]] = []
        for field in fields where isListed(field.name, connectionList) {
            // `#connection-option`: elements between commas, optional whitespace around each, empty ones ignored
            // (RFC 9110 §5.6.1); each read in place, and copied (lowercased) only when it names a field to drop.
            var value = field.value
            value.withUTF8 { bytes in
                var start = 0
                while start < bytes.count {
                    var end = start
                    while end < bytes.count, bytes[end] != 0x2C { end += 1 }
                    var first = start
                    var last = end
                    while first < last, isWhitespace(bytes[first]) { first += 1 }
                    while last > first, isWhitespace(bytes[last - 1]) { last -= 1 }
                    let option = UnsafeBufferPointer(rebasing: bytes[first..<last])
                    if isToken(option), !isListed(option, hopByHopBytes), !isListed(option, dropped) {
                        named.append(option.map(lowercased))
                    }
                    start = end + 1
                }
            }
        }
        return named
    }

    /// Whether `bytes` are one of `list` (lowercase ASCII) but for ASCII case.
    private static func isListed(_ bytes: UnsafeBufferPointer<UInt8>, _ list: [[UInt8]]) -> Bool {
        list.contains { $0.count == bytes.count && startsIgnoringCase(bytes, with: $0) }
    }

    /// The lists above as bytes, for comparing names without lowercasing each (a third of the header filters' cost).
    private static let hopByHopBytes = hopByHop.map { Array($0.utf8) }
    private static let requestDroppedBytes = requestDropped.map { Array($0.utf8) }
    private static let responseDroppedBytes = responseDropped.map { Array($0.utf8) }
    private static let brokerPrefixBytes = Array(brokerPrefix.utf8)
    /// `Connection` as a list of one, made once: a list literal at the call would be an array allocated per field.
    private static let connectionList = [Array("connection".utf8)]

    /// The list a field name is on, for the filters: which of them drops it, or renames it.
    enum Listing {
        case hopByHop, requestDropped, responseDropped
        /// `Date` and `X-Request-Id`: the broker writes its own of each on its answers.
        case date, requestID
    }

    /// Every listed name (lowercase) with its list: one look-up per field instead of one per list.
    private static let listings: [(name: [UInt8], listing: Listing)] =
        hopByHopBytes.map { ($0, .hopByHop) } + requestDroppedBytes.map { ($0, .requestDropped) }
        + responseDroppedBytes.map { ($0, .responseDropped) } + [(Array("date".utf8), .date), (Array("x-request-id".utf8), .requestID)]

    /// The list `name` is on but for ASCII case, or nil; its bytes are compared in place.
    static func listing(of name: String) -> Listing? {
        var name = name
        return name.withUTF8 { bytes in
            for entry in listings where entry.name.count == bytes.count && startsIgnoringCase(bytes, with: entry.name) {
                return entry.listing
            }
            return nil
        }
    }

    /// Whether `name` is one of `list` (lowercase ASCII) but for ASCII case.
    static func isListed(_ name: String, _ list: [[UInt8]]) -> Bool {
        // A native string's bytes are compared in place: walking `String.UTF8View` index by index was most of the
        // filters' cost.
        if let found = name.utf8.withContiguousStorageIfAvailable({ bytes in
            list.contains { $0.count == bytes.count && startsIgnoringCase(bytes, with: $0) }
        }) {
            return found
        }
        let count = name.utf8.count
        return list.contains { $0.count == count && startsIgnoringCase(name, with: $0) }
    }

    /// Whether `name` starts with `prefix` (lowercase ASCII) but for ASCII case.
    static func startsIgnoringCase(_ name: String, with prefix: [UInt8]) -> Bool {
        if let found = name.utf8.withContiguousStorageIfAvailable({ startsIgnoringCase($0, with: prefix) }) { return found }
        var index = name.utf8.startIndex
        for expected in prefix {
            guard index != name.utf8.endIndex else { return false }
            guard lowercased(name.utf8[index]) == expected else { return false }
            name.utf8.formIndex(after: &index)
        }
        return true
    }

    /// Whether `bytes` start with `prefix` (lowercase ASCII) but for ASCII case.
    private static func startsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        return prefix.withUnsafeBufferPointer { prefix in
            for i in 0..<prefix.count where lowercased(bytes[i]) != prefix[i] { return false }
            return true
        }
    }

    /// Whether two field names are the same but for ASCII case (RFC 9110 §5.1: names are case-insensitive tokens),
    /// without lowercasing either into a new string.
    static func equalsIgnoringCase(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { lowercased($0) == lowercased($1) }
    }

    /// An ASCII capital letter as its small letter; any other byte as it is.
    private static func lowercased(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Whether `secret`'s UTF-8 occurs in the UTF-8 of `text`, byte for byte, without copying the secret's bytes out.
    /// (Foundation's `contains` compares through NSString, which made this check a third of a proxied call's
    /// instructions; the C library's `memchr` finds each place the first byte occurs, `memcmp` checks the rest there.)
    static func contains(_ text: String, secret: String) -> Bool {
        var secret = secret
        return secret.withUTF8 { needle in
            guard !needle.isEmpty else { return true }
            var text = text
            return text.withUTF8 { hay in
                guard needle.count <= hay.count, let base = hay.baseAddress.map(UnsafeRawPointer.init),
                    let wanted = needle.baseAddress
                else { return false }
                let last = hay.count - needle.count
                var offset = 0
                while offset <= last, let found = memchr(base + offset, Int32(needle[0]), last - offset + 1) {
                    let at = UnsafeRawPointer(found) - base
                    if memcmp(base + at, wanted, needle.count) == 0 { return true }
                    offset = at + 1
                }
                return false
            }
        }
    }

    /// Whether `field` has an RFC 9110 §5.1 token as its name and a §5.5 field-value: visible bytes, spaces, tabs and
    /// obs-text, never CR, LF, NUL or another control byte, with no leading or trailing whitespace.
    public static func isWellFormed(_ field: Field) -> Bool {
        isToken(field.name) && isFieldValue(field.value)
    }

    /// RFC 9110 §5.6.2: `token = 1*tchar`.
    public static func isToken(_ text: String) -> Bool {
        // One pass over the string's bytes in place (a native string's); `String.UTF8View` index by index otherwise.
        if let found = text.utf8.withContiguousStorageIfAvailable(isToken) { return found }
        return !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    private static func isToken(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        for byte in bytes where !isTokenByte(byte) { return false }
        return true
    }

    /// RFC 9110 §5.5: `field-value = *field-content`; a value's ends are not whitespace (they would be trimmed).
    public static func isFieldValue(_ text: String) -> Bool {
        if let found = text.utf8.withContiguousStorageIfAvailable(isFieldValue) { return found }
        let bytes = text.utf8
        guard let first = bytes.first, let last = bytes.last else { return true }
        return !isWhitespace(first) && !isWhitespace(last) && bytes.allSatisfy(isFieldValueByte)
    }

    private static func isFieldValue(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, let last = bytes.last, let base = bytes.baseAddress else { return true }
        guard !isWhitespace(first), !isWhitespace(last) else { return false }
        // Eight bytes a step: a word with no byte below 0x20 and none equal to 0x7F holds only field-value bytes
        // (Hacker's Delight's tests, which never miss such a byte); any other word is looked at byte by byte, so a
        // tab, which is allowed, costs only that word's loop.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        while i + 8 <= bytes.count {
            let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            let deleted = word ^ (ones &* 0x7F)
            if (word &- ones &* 0x20) & ~word & highs != 0 || (deleted &- ones) & ~deleted & highs != 0 {
                for j in i..<(i + 8) where !isFieldValueByte(bytes[j]) { return false }
            }
            i += 8
        }
        while i < bytes.count {
            guard isFieldValueByte(bytes[i]) else { return false }
            i += 1
        }
        return true
    }

    /// A byte a field value may hold (RFC 9110 §5.5 `field-vchar`, SP, HTAB, obs-text): anything but controls and DEL.
    private static func isFieldValueByte(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }

    /// RFC 9110 §5.6.2 `tchar`: `!#$%&'*+-.^_`|~`, digits and letters.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    /// RFC 9110 §5.6.3 `OWS` bytes: space and horizontal tab.
    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
}
