import BrokerTestSupport
import Foundation

/// A JSON value written by hand, so that tests choose the escapes, the spacing and the member order.
enum JSONText {
    case string(String)
    case integer(Int)
    case null
    case object([JSONMember])

    /// The object read back by `JSONSerialization` from `bytes`, members in the order `order` puts them.
    static func from(_ bytes: [UInt8], order: ([String]) -> [String] = { $0.sorted() }) throws -> JSONText {
        try value(JSONSerialization.jsonObject(with: Data(bytes)), order: order)
    }

    private static func value(_ value: Any, order: ([String]) -> [String]) throws -> JSONText {
        switch value {
        case let text as String: return .string(text)
        case let object as [String: Any]:
            return .object(try order(Array(object.keys)).map { JSONMember(name: $0, value: try Self.value(object[$0]!, order: order)) })
        case let number as NSNumber: return .integer(number.intValue)
        case is NSNull: return .null
        default: throw StoreTestError("unexpected JSON value \(type(of: value))")
        }
    }

    /// The UTF-8 text in `style`.
    func bytes(_ style: JSONTextStyle) -> [UInt8] {
        var out = ""
        write(to: &out, style)
        return Array(out.utf8)
    }

    private func write(to out: inout String, _ style: JSONTextStyle) {
        switch self {
        case .string(let text): Self.quote(text, to: &out, style)
        case .integer(let value): out += String(value)
        case .null: out += "null"
        case .object(let members):
            out += "{" + style.space
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," + style.space }
                Self.quote(member.name, to: &out, JSONTextStyle(space: style.space))
                out += style.space + ":" + style.space
                member.value.write(to: &out, style)
            }
            out += style.space + "}"
        }
    }

    private static func quote(_ text: String, to out: inout String, _ style: JSONTextStyle) {
        out += "\""
        var asciiSeen = 0
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "/" where style.escapeSlash: out += "\\/"
            case _ where scalar.value < 0x20: out += unicodeEscape(UInt16(scalar.value))
            case _ where scalar.value >= 0x80 && style.escapeNonASCII:
                for unit in String(scalar).utf16 { out += unicodeEscape(unit) }
            case _ where scalar.properties.isASCIIHexDigit || (scalar.isASCII && scalar.properties.isAlphabetic):
                asciiSeen += 1
                if style.escapeEveryNthASCII > 0, asciiSeen % style.escapeEveryNthASCII == 0 {
                    out += unicodeEscape(UInt16(scalar.value))
                } else {
                    out.unicodeScalars.append(scalar)
                }
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    private static func unicodeEscape(_ unit: UInt16) -> String {
        let hex = String(unit, radix: 16)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}

/// SplitMix64: a seeded generator, so a failing case can be run again.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// One member of a ``JSONText`` object.
struct JSONMember {
    var name: String
    var value: JSONText
}

/// How a ``JSONText`` is written.
struct JSONTextStyle {
    /// Every character outside ASCII as `\uXXXX` (a surrogate pair beyond the BMP).
    var escapeNonASCII: Bool = false
    /// `/` as `\/`.
    var escapeSlash: Bool = false
    /// Every n-th ASCII letter or digit of a string as `\u00XX`; 0 for none.
    var escapeEveryNthASCII: Int = 0
    /// What goes between tokens: "" (compact), "\n  " (pretty), or any JSON whitespace.
    var space: String = ""
}
