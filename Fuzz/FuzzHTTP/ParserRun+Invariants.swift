import BrokerHTTP
import FuzzSupport

/// What every accepted head and body must satisfy, whatever the bytes were (RFC 9112 and the configured limits).
extension ParserRun {
    /// Checks a head the parser accepted against the limits and the framing rules.
    func checkHead(_ h: HTTPRequestHead) {
        let target = Array(h.target.utf8)
        // RFC 9112 §3 and the limits: a non-empty target of visible ASCII, within maxTargetBytes.
        require(!target.isEmpty && target.count <= limits.maxTargetBytes, "target length \(target.count)")
        require(target.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "target holds a control, space or non-ASCII byte")
        if target.first == UInt8(ascii: "/") {
            require(h.path + (h.query.map { "?" + $0 } ?? "") == h.target, "path and query do not rebuild the target")
        } else {
            require(h.path.hasPrefix("/") || (h.path == "*" && h.method == .OPTIONS), "path \(h.path.utf8.count) bytes")
        }
        // RFC 9112 §2.3: only HTTP/1.x is accepted.
        require(h.version.major == 1 && (0...9).contains(h.version.minor), "version \(h.version)")
        require(h.headers.count <= limits.maxHeaderCount, "\(h.headers.count) header fields")
        // The raw head: up to 8 empty lines, the request line, then a header section (blank line included) within the limit.
        let requestLine = h.method.rawValue.utf8.count + 1 + target.count + 1 + 8 + 2
        require(headEnd - requestStart <= 2 * 8 + requestLine + limits.maxHeaderBytes, "head of \(headEnd - requestStart) bytes")
        // The fields as received are at least this long (a byte repaired to U+FFFD counts once).
        let sectionBytes = h.headers.fields.reduce(2) { $0 + Self.receivedLength($1.name) + 3 + Self.receivedLength($1.value) }
        require(sectionBytes <= limits.maxHeaderBytes + 2, "header section of at least \(sectionBytes) bytes")
        for field in h.headers.fields {
            require(!field.name.isEmpty && field.name.utf8.allSatisfy(Self.isTokenByte), "field name is not a token")
            require(
                field.value.unicodeScalars.allSatisfy { $0 == "\t" || ($0.value >= 0x20 && $0.value != 0x7F) },
                "field value holds a control byte")
            require(
                field.value.first != " " && field.value.first != "\t" && field.value.last != " " && field.value.last != "\t",
                "field value keeps its surrounding whitespace")
        }
        checkFraming(h)
        // RFC 9112 §3.2: exactly one Host on HTTP/1.1, never two.
        let hosts = count(h, "host")
        require(hosts <= 1 && (h.version.minor == 0 || hosts == 1), "\(hosts) Host fields on \(h.version)")
        require(!h.expectContinue || h.version.minor != 0, "100-continue honoured on HTTP/1.0")
        require(!h.keepAlive || h.version.minor != 0 || count(h, "connection") > 0, "HTTP/1.0 kept alive without asking")
    }

    /// RFC 9112 §6.1–6.3: the framing follows from Content-Length and Transfer-Encoding, and never both.
    private func checkFraming(_ h: HTTPRequestHead) {
        let lengths = h.headers.fields.filter { $0.name.lowercased() == "content-length" }
        let codings = count(h, "transfer-encoding")
        require(lengths.count <= 1 && !(lengths.count == 1 && codings > 0), "Content-Length with Transfer-Encoding or twice")
        switch h.framing {
        case .none:
            require(lengths.isEmpty && codings == 0, "no framing despite a framing field")
        case .length(let n):
            require(codings == 0 && lengths.count == 1 && Int(lengths[0].value) == n, "length \(n) is not the Content-Length")
            require(n <= limits.maxBodyBytes, "announced body \(n) over the limit")
        case .chunked:
            require(codings > 0 && lengths.isEmpty && h.version.minor != 0, "chunked without Transfer-Encoding on 1.1")
        }
    }

    /// Checks a complete request's body against its framing and the raw bytes it came from.
    func checkBody(_ r: FramedRequest) {
        require(r.start < r.headEnd && r.headEnd <= r.end && r.end <= input.count, "offsets \(r.start) \(r.headEnd) \(r.end)")
        require(r.body.count <= limits.maxBodyBytes, "body of \(r.body.count) bytes over the limit")
        switch r.framing {
        case .none:
            require(r.body.isEmpty && r.end == r.headEnd, "a body without framing")
        case .length(let n):
            // The body is exactly the next n raw bytes: nothing more, nothing less, nothing changed.
            require(r.end == r.headEnd + n && r.body.elementsEqual(input[r.headEnd..<r.end]), "Content-Length body boundary")
        case .chunked:
            // At least "0" CRLF CRLF of framing, and never more data than bytes.
            require(r.end - r.headEnd >= 5 && r.body.count <= r.end - r.headEnd - 5, "chunked body boundary")
            require(input[(r.end - 2)..<r.end].elementsEqual([0x0D, 0x0A]), "chunked body not ended by CRLF")
        }
    }

    /// How many fields named `name` (lowercase) the head has.
    private func count(_ h: HTTPRequestHead, _ name: String) -> Int {
        h.headers.fields.reduce(0) { $0 + ($1.name.lowercased() == name ? 1 : 0) }
    }

    /// A lower bound of the bytes `text` was decoded from: invalid bytes became one U+FFFD each.
    private static func receivedLength(_ text: String) -> Int {
        text.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : String($1).utf8.count) }
    }

    /// RFC 9110 §5.6.2 tchar.
    private static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
    }
}
