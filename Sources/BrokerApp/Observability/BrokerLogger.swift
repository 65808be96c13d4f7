import BrokerCore
import BrokerHTTP
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Structured log lines: `text` for a terminal, `json` (one object a line) for collectors.
///
/// Values passed here must never be secrets: callers log ids, codes and reasons only.
public struct BrokerLogger: Sendable {
    /// Severity of a line.
    public enum Level: String, Sendable { case debug, info, warning, error }

    /// The output format.
    public let format: BrokerConfiguration.LogFormat
    let writer: LogWriter

    /// Creates a logger writing through `writer`.
    public init(format: BrokerConfiguration.LogFormat, writer: LogWriter = LogWriter()) {
        self.format = format
        self.writer = writer
    }

    /// Logs an event with a message and ordered fields; inside a request's handler the line also carries
    /// `request_id` (unless the fields already name it).
    public func log(_ level: Level, _ message: String, _ fields: [(String, LogValue)] = []) {
        var fields = fields
        if let id = RequestID.current, !fields.contains(where: { $0.0 == "request_id" }) {
            fields.append(("request_id", .string(id)))
        }
        var line = ""
        line.reserveCapacity(128)
        let ts = RFC3339Date.formatWithMillis(Date())
        switch format {
        case .json:
            line += "{\"ts\":\"\(ts)\",\"level\":\"\(level.rawValue)\",\"msg\":"
            line += JSONString.quote(message)
            for (key, value) in fields {
                line += ",\""
                line += key
                line += "\":"
                value.appendJSON(to: &line)
            }
            line += "}"
        case .text:
            line += ts
            line += " "
            line += level.rawValue.uppercased()
            line += " "
            line += message
            for (key, value) in fields {
                line += " "
                line += key
                line += "="
                value.appendText(to: &line)
            }
        }
        writer.write(line)
    }

    /// Writes pending lines now.
    public func flush() { writer.flush() }
}

/// A value in a log line.
public enum LogValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double, decimals: Int)
    case bool(Bool)

    func appendJSON(to line: inout String) {
        switch self {
        case .string(let s): line += JSONString.quote(s)
        case .int(let i): line += String(i)
        case .double(let d, let decimals): line += Self.fixed(d, decimals)
        case .bool(let b): line += b ? "true" : "false"
        }
    }

    func appendText(to line: inout String) {
        switch self {
        case .string(let s):
            if s.isEmpty || s.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) {
                line += JSONString.quote(s)
            } else {
                line += s
            }
        case .int(let i): line += String(i)
        case .double(let d, let decimals): line += Self.fixed(d, decimals)
        case .bool(let b): line += b ? "true" : "false"
        }
    }

    /// ``appendJSON(to:)`` into UTF-8 bytes.
    func appendJSON(to line: inout ByteWriter) {
        switch self {
        case .string(let s): JSONString.appendQuoted(s, to: &line)
        case .int(let i): line.append(decimal: i)
        case .double(let d, let decimals): Self.appendFixed(d, decimals, to: &line)
        case .bool(let b): line.append(b ? "true" : "false")
        }
    }

    /// ``appendText(to:)`` into UTF-8 bytes.
    func appendText(to line: inout ByteWriter) {
        switch self {
        case .string(let s):
            // The same rule as the string version: ASCII is checked byte by byte, anything else (U+2028 is a newline
            // too) by characters. Scanned through the contiguous UTF-8: every audit line writes seven of these.
            var s = s
            let rule = s.withUTF8 { utf8 -> TextQuoting in
                guard !utf8.isEmpty else { return .quote }
                var ascii = true
                for byte in utf8 {
                    if byte == 0x20 || byte == 0x22 || byte == 0x3D || (0x0A...0x0D).contains(byte) { return .quote }
                    if byte >= 0x80 { ascii = false }
                }
                guard ascii else { return .askCharacters }
                line.append(utf8)
                return .written
            }
            switch rule {
            case .written: break
            case .quote: JSONString.appendQuoted(s, to: &line)
            case .askCharacters:
                if s.contains(where: \.isNewline) { JSONString.appendQuoted(s, to: &line) } else { line.append(string: s) }
            }
        case .int, .double, .bool:
            appendJSON(to: &line)
        }
    }

    /// What the byte scan of a text value found.
    private enum TextQuoting {
        /// Plain ASCII, already appended as it is.
        case written
        /// Empty, or an ASCII byte that needs quotes (space, `"`, `=`, a line break).
        case quote
        /// Non-ASCII: quoted only when a character is a newline.
        case askCharacters
    }

    /// ``fixed(_:_:)``'s bytes written in place, with no string made (every audit line has a `duration_ms`).
    static func appendFixed(_ value: Double, _ decimals: Int, to line: inout ByteWriter) {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        // The same arithmetic as `fixed`; outside what an Int holds, or with many decimals, its string is written.
        guard decimals <= 18, value.isFinite, abs(value * scale) < 9e18 else { return line.append(string: fixed(value, decimals)) }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let frac = abs(scaled % Int(scale))
        line.append(decimal: whole)
        guard decimals > 0 else { return }
        line.append(0x2E)
        var digits = 1
        var rest = frac / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        for _ in digits..<max(decimals, digits) { line.append(0x30) }
        line.append(decimal: frac)
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let frac = abs(scaled % Int(scale))
        guard decimals > 0 else { return String(whole) }
        let fracText = String(frac)
        return "\(whole).\(String(repeating: "0", count: decimals - fracText.count))\(fracText)"
    }
}
