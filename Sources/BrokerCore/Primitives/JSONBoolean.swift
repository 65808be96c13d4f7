import Foundation

/// Tells JSON `true` and `false` apart from numbers in what `JSONSerialization` returns: the one place that test lives.
///
/// `JSONSerialization` hands back both as `NSNumber`; a boolean's has the
/// type code `c` (`CFBoolean` on Darwin, the same code in swift-corelibs).
/// `as? Bool` would take `0` and `1` for booleans, and `as? Int` would take
/// `true` for 1, so a provider's `"active": 1` or `"exp": true` must be told
/// apart here before it is read as either.
enum JSONBoolean {
    /// Whether `number` came from JSON `true` or `false`.
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }

    /// The value of JSON `true` or `false`; nil for anything else, the numbers 0 and 1 and the strings "true" and "false" included.
    static func value(_ value: Any?) -> Bool? {
        guard let number = value as? NSNumber, isBoolean(number) else { return nil }
        return number.boolValue
    }

    /// `value` when it is a JSON number, not a boolean; nil for anything else.
    static func number(_ value: Any?) -> NSNumber? {
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        return number
    }
}
