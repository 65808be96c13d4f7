import Foundation

/// Reads loosely typed JSON values the way providers send them (numbers as strings, ids as numbers).
enum ProviderValue {
    /// Whether `value` is JSON null.
    static func isNull(_ value: Any) -> Bool {
        value is NSNull
    }

    /// A non-empty string value, or nil.
    static func text(_ value: Any?) -> String? {
        guard let string = value as? String, !string.isEmpty else { return nil }
        return string
    }

    /// A whole number given as a JSON number or a string of digits, or nil (booleans and fractions are not numbers here).
    static func integer(_ value: Any) -> Int? {
        if let string = value as? String {
            return Int(string.trimmingCharacters(in: .whitespaces))
        }
        return wholeNumber(value).flatMap { Int($0) }
    }

    /// An identifier given as a string or a whole JSON number (Weibo's `uid` comes both ways), as text.
    static func identifier(_ value: Any?) -> String? {
        guard let value else { return nil }
        if let string = value as? String {
            return string.isEmpty ? nil : string
        }
        return wholeNumber(value)
    }

    /// An identifier given as a non-empty string or a JSON integer, as text; nil for anything else.
    ///
    /// The strict variant of ``identifier(_:)``: a number with a fraction or an
    /// exponent (`4242.0`, `1e3`) and one too large for 64 bits, which
    /// JSONSerialization reads as a Double or a Decimal, are refused rather than
    /// rounded, so the id is the provider's digits exactly.
    static func exactIdentifier(_ value: Any) -> String? {
        if let string = value as? String {
            return string.isEmpty ? nil : string
        }
        return JSONBoolean.number(value).flatMap(integerDigits)
    }

    /// The decimal digits of a whole JSON number, read without passing large integers through Double.
    private static func wholeNumber(_ value: Any) -> String? {
        guard let number = JSONBoolean.number(value) else { return nil }
        if let digits = integerDigits(number) { return digits }
        let double = number.doubleValue
        guard double.rounded() == double, let exact = Int64(exactly: double) else { return nil }
        return String(exact)
    }

    /// The digits of a number JSONSerialization read as an integer; nil for one it read through Double or Decimal.
    private static func integerDigits(_ number: NSNumber) -> String? {
        switch String(cString: number.objCType) {
        case "d", "f":
            return nil
        case "Q", "L", "I", "S", "C":
            return String(number.uint64Value)
        default:
            return String(number.int64Value)
        }
    }

    /// The longest display name kept, in UTF-8 bytes.
    static let maximumDisplayNameBytes = 256

    /// A display name (screen name, login, username) fit to store and show: 1–256 bytes without
    /// control characters; anything else is dropped, since the name is only a courtesy to people.
    static func displayName(_ value: Any?) -> String? {
        guard let name = text(value), name.utf8.count <= maximumDisplayNameBytes,
            name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && !(0x7F...0x9F).contains($0.value) })
        else { return nil }
        return name
    }

    /// Whether `value` is JSON `false` or the string `"false"` (Weibo writes booleans as strings).
    static func isFalse(_ value: Any) -> Bool {
        if let string = value as? String { return string.lowercased() == "false" }
        return JSONBoolean.value(value) == false
    }

    /// A scope as a string, or a JSON array of scopes joined with spaces.
    static func scope(_ value: Any?) -> String? {
        if let list = value as? [Any] {
            let scopes = list.compactMap { $0 as? String }
            return scopes.isEmpty ? nil : scopes.joined(separator: " ")
        }
        return value as? String
    }

    /// The media type of a Content-Type value (`text/html`), lowercased and shown only when plain.
    static func mediaType(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let plain =
            !type.isEmpty && type.count <= 64
            && type.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/+.-".unicodeScalars.contains($0))
            }
        return plain ? type : nil
    }
}
