import BrokerCrypto

/// One JSON value on one line, as the journals and snapshots keep records.
package enum JSONLine {
    /// `json` without the whitespace between its tokens (RFC 8259 §2: space, tab, line feed, carriage return).
    ///
    /// Whitespace inside strings is kept byte for byte, and a string can hold
    /// no raw line feed (§7), so the result is one line with the same value.
    package static func compact(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count)
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case 0x22: inString = true
            default: break
            }
            out.append(byte)
        }
        return out
    }

    /// `string` as a JSON string literal: quotes, backslashes and control characters escaped (RFC 8259 §7), other bytes as they are.
    static func string(_ string: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for byte in string.utf8 {
            switch byte {
            case 0x22, 0x5C: out += [0x5C, byte]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x00..<0x20:
                out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, Hex.digit(byte >> 4), Hex.digit(byte)]
            default: out.append(byte)
            }
        }
        out.append(0x22)
        return out
    }
}
