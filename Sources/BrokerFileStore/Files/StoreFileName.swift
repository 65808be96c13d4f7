import BrokerCore
import BrokerCrypto

/// Maps record keys to safe, unique file names, and back.
package enum StoreFileName {
    /// The extension of every record file.
    static let recordExtension = ".json"

    /// The longest record file name accepted, leaving room for a temporary suffix within NAME_MAX (255).
    static let maximumLength = 200

    /// The marker between a per-flow file name and the random suffix of its claimed copy (`<state>.json.taken.<random>`).
    package static let takenFlowMarker = ".taken."

    /// The first byte of a digest name; percent-encoding writes `~` as `%7E`, so no encoded name starts with it.
    static let digestMarker = UInt8(ascii: "~")

    /// The record file name of account `id`: `<percent-encoded id>.json`, or a digest name when that is too long.
    ///
    /// Every byte outside `[A-Za-z0-9._-]` is encoded as `%XX`, so the mapping
    /// is injective and two ids never share a file; an id always contains `:`
    /// (encoded `%3A`), so a name is never `.`, `..` or a temporary. An id whose
    /// encoded name would pass ``maximumLength`` (uids up to 128 bytes of `/`,
    /// `é` or CJK triple in size) is stored as `~<SHA-256 of the id, hex>.json`;
    /// the record inside names the id, and the loader checks the two agree.
    package static func forAccount(id: String) -> String {
        var name = ""
        name.reserveCapacity(id.utf8.count + 5)
        for byte in id.utf8 {
            if isUnreserved(byte) {
                name.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                name += "%" + hex(byte >> 4) + hex(byte & 0x0F)
            }
            if name.utf8.count + recordExtension.utf8.count > maximumLength { return digestName(id: id) }
        }
        return name + recordExtension
    }

    /// `~<64 hex digits>.json`: the name of an id too long to encode.
    static func digestName(id: String) -> String {
        "~" + Hex.encode(SHA256.hash(Array(id.utf8))) + recordExtension
    }

    /// Whether `name` ends in ``recordExtension``, compared on bytes.
    static func isRecordName(_ name: String) -> Bool {
        name.utf8.count > recordExtension.utf8.count && name.utf8.suffix(recordExtension.utf8.count).elementsEqual(recordExtension.utf8)
    }

    /// Whether `name` is the file name of account `id`, as ``forAccount(id:)`` would make it, compared without building it.
    static func isName(_ name: String, forAccount id: String) -> Bool {
        if name.utf8.first == digestMarker { return name == forAccount(id: id) }
        var expected = name.utf8.makeIterator()
        for byte in id.utf8 {
            if isUnreserved(byte) {
                guard expected.next() == byte else { return false }
            } else {
                guard expected.next() == UInt8(ascii: "%"), expected.next() == hexDigit(byte >> 4),
                    expected.next() == hexDigit(byte & 0x0F)
                else { return false }
            }
        }
        for byte in recordExtension.utf8 where expected.next() != byte { return false }
        return expected.next() == nil && name.utf8.count <= maximumLength
    }

    /// The account id a percent-encoded record file name stands for, or nil when `name` is not one
    /// this type would make (a digest name does not say its id: the record does).
    static func accountID(fileName name: String) -> String? {
        guard name.hasSuffix(recordExtension) else { return nil }
        let encoded = Array(name.utf8.dropLast(recordExtension.utf8.count))
        var bytes: [UInt8] = []
        var index = 0
        while index < encoded.count {
            let byte = encoded[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < encoded.count, let high = hexValue(encoded[index + 1]), let low = hexValue(encoded[index + 2]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                guard isUnreserved(byte) else { return nil }
                bytes.append(byte)
                index += 1
            }
        }
        guard let id = String(validating: bytes, as: UTF8.self), ExactKey.same(forAccount(id: id), name) else { return nil }
        return id
    }

    /// `<state>.json` for a state of 16–128 characters from `[A-Za-z0-9_-]` (base64url), else nil.
    ///
    /// Anything else is refused before the file system is touched, so a state
    /// can never name a path outside the flows directory.
    package static func forFlow(state: String) -> String? {
        let bytes = state.utf8
        guard (16...128).contains(bytes.count),
            bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else { return nil }
        return state + recordExtension
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }

    private static func hex(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? 0x30 + nibble : 0x37 + nibble))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x37 + nibble
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x37
        default: return nil
        }
    }
}
