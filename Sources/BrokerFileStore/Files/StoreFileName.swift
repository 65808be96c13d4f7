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
                name += "%" + Hex.encode([byte], uppercase: true)
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
                guard expected.next() == UInt8(ascii: "%"), expected.next() == Hex.digit(byte >> 4, uppercase: true),
                    expected.next() == Hex.digit(byte, uppercase: true)
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
        // Only the name this type would make for the decoded id counts: any other spelling (a lowercase
        // escape, an escaped unreserved byte, a literal byte that needs one) fails the comparison.
        let encoded = String(decoding: name.utf8.dropLast(recordExtension.utf8.count), as: UTF8.self)
        guard let id = PercentEncoding.percentDecode(encoded, plusIsSpace: false), ExactKey.same(forAccount(id: id), name) else {
            return nil
        }
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
}
