import Foundation

/// Formats and parses RFC 3339 timestamps in UTC without locales or formatters.
///
/// Written as `2026-11-30T08:00:00Z`, with milliseconds (`.123`) only when the
/// date has a fractional part. Parsing accepts any number of fraction digits
/// and any numeric offset (RFC 3339 §5.6).
public enum RFC3339Date {
    /// The UTC timestamp for `date`, to the millisecond.
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The UTC timestamp for `date` with milliseconds always written (`.000` too): log lines line up.
    public static func formatWithMillis(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes, alwaysMillis: true)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The earliest instant a four-digit year can write: 0001-01-01T00:00:00Z.
    public static let earliest = Date(timeIntervalSince1970: -62_135_596_800)
    /// The latest instant written: 9999-12-31T23:59:59Z (a fraction could round up into year 10000).
    public static let latest = Date(timeIntervalSince1970: 253_402_300_799)

    /// The most bytes ``write(_:to:alwaysMillis:)`` writes: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static let maximumCount = 24

    /// Appends the timestamp as UTF-8 bytes, without building strings (hot path of `/account`).
    public static func append(_ date: Date, to out: inout [UInt8], alwaysMillis: Bool = false) {
        // Written on the stack and appended once: a byte-at-a-time append to the array cost more than the arithmetic.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumCount) { buffer in
            let count = write(date, to: buffer.baseAddress!, alwaysMillis: alwaysMillis)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// Writes the timestamp's UTF-8 bytes at `p`, which has room for ``maximumCount``; returns how many it wrote.
    ///
    /// A date outside ``earliest``…``latest`` (or not finite) is written as the
    /// nearest end of that range: the integer conversions below would trap on it,
    /// and a fifth year digit would not fit. Provider lifetimes are range-checked
    /// where they enter, so this is a backstop, not a path taken.
    public static func write(_ date: Date, to p: UnsafeMutablePointer<UInt8>, alwaysMillis: Bool = false) -> Int {
        // The bounds as literals (those of `earliest` and `latest`): reading the static dates cost a call each.
        var interval = date.timeIntervalSince1970
        if !(interval >= -62_135_596_800) { interval = -62_135_596_800 }
        if interval > 253_402_300_799 { interval = 253_402_300_799 }
        var seconds = Int(interval.rounded(.down))
        var millis = Int(((interval - Double(seconds)) * 1000).rounded())
        if millis == 1000 {
            seconds += 1
            millis = 0
        }
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        // Each value is in range here (year 1-9999, the rest below 1,000), written two digits at a time, straight
        // into place (four dates and the audit line's time on every `/account` read).
        func two(_ value: Int, at offset: Int) {
            let (tens, ones) = value.quotientAndRemainder(dividingBy: 10)
            p[offset] = UInt8(truncatingIfNeeded: 48 + tens)
            p[offset + 1] = UInt8(truncatingIfNeeded: 48 + ones)
        }
        two(year / 100, at: 0)
        two(year % 100, at: 2)
        p[4] = 0x2D
        two(month, at: 5)
        p[7] = 0x2D
        two(day, at: 8)
        p[10] = 0x54
        two(secondOfDay / 3600, at: 11)
        p[13] = 0x3A
        two(secondOfDay / 60 % 60, at: 14)
        p[16] = 0x3A
        two(secondOfDay % 60, at: 17)
        var count = 19
        if millis != 0 || alwaysMillis {
            p[19] = 0x2E
            p[20] = UInt8(truncatingIfNeeded: 48 + millis / 100)
            two(millis % 100, at: 21)
            count = 23
        }
        p[count] = 0x5A
        return count + 1
    }

    /// The date in an RFC 3339 `date-time`, or nil when `text` is not one.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8(parse(utf8:))
    }

    /// The date in the UTF-8 bytes of an RFC 3339 `date-time` (a slice of a record file, say), or nil.
    static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        // Start-up reads three dates per account (a million accounts: three million), nearly all in the form the
        // broker writes; anything else takes the general path, and both give the same answer for the same bytes.
        if let fixed = parseWrittenForm(bytes) { return fixed }
        return parseAnyForm(utf8: bytes)
    }

    /// The date in `YYYY-MM-DDTHH:MM:SSZ` or `YYYY-MM-DDTHH:MM:SS.mmmZ` (what ``write(_:to:alwaysMillis:)`` writes),
    /// read at fixed offsets; nil for any other text, valid or not, which ``parseAnyForm(utf8:)`` then reads.
    static func parseWrittenForm(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count == 20 || bytes.count == 24, let p = bytes.baseAddress else { return nil }
        // Two ASCII digits at `offset` as a number, or a value of 100 or more when either is not a digit.
        func two(_ offset: Int) -> Int {
            let tens = Int(p[offset] &- 0x30), ones = Int(p[offset + 1] &- 0x30)
            return tens < 10 && ones < 10 ? tens * 10 + ones : 1000
        }
        let last = bytes.count - 1
        guard p[4] == 0x2D, p[7] == 0x2D, p[10] == 0x54, p[13] == 0x3A, p[16] == 0x3A, p[last] == 0x5A else { return nil }
        let century = two(0), yearOfCentury = two(2), month = two(5), day = two(8)
        let hour = two(11), minute = two(14), second = two(17)
        guard century < 100, yearOfCentury < 100, month < 100, day < 100, hour < 100, minute < 100, second < 100 else { return nil }
        var millis = 0
        if bytes.count == 24 {
            let first = Int(p[20] &- 0x30), rest = two(21)
            guard p[19] == 0x2E, first < 10, rest < 100 else { return nil }
            millis = first * 100 + rest
        }
        let year = century * 100 + yearOfCentury
        // The same checks and the same arithmetic as the general path, so the same `Date` to the last bit.
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second <= 60  // RFC 3339 §5.7: 60 only for a leap second.
        else { return nil }
        let fraction = bytes.count == 24 ? Double(millis) / Double(1000) : 0.0
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// The date in the UTF-8 bytes of any RFC 3339 `date-time`, or nil: fractions of any length, offsets, `t`, `z`, a space.
    static func parseAnyForm(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var scanner = DigitScanner(bytes)
        // RFC 3339 §5.6: full-date "T" partial-time time-offset; §5.6 NOTE allows "t", "z" and a space.
        guard let year = scanner.number(digits: 4), scanner.take("-"),
            let month = scanner.number(digits: 2), scanner.take("-"),
            let day = scanner.number(digits: 2), scanner.take(oneOf: "Tt "),
            let hour = scanner.number(digits: 2), scanner.take(":"),
            let minute = scanner.number(digits: 2), scanner.take(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second <= 60  // RFC 3339 §5.7: 60 only for a leap second.
        else { return nil }
        var fraction = 0.0
        if scanner.take(".") {
            guard let digits = scanner.fractionDigits() else { return nil }
            fraction = digits
        }
        var offset = 0
        if scanner.take(oneOf: "Zz") {
            offset = 0
        } else if let sign = scanner.sign(), let offsetHour = scanner.number(digits: 2), scanner.take(":"),
            let offsetMinute = scanner.number(digits: 2), offsetHour < 24, offsetMinute < 60
        {
            offset = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// The days in `month` of `year` in the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// A cursor over ASCII bytes for the RFC 3339 parser.
private struct DigitScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func number(digits: Int) -> Int? {
        guard index + digits <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[index..<index + digits] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += digits
        return value
    }

    /// The value of the digits after a decimal point; digits past the ninth (nanoseconds) are ignored.
    mutating func fractionDigits() -> Double? {
        var numerator = 0
        var denominator = 1
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            if denominator < 1_000_000_000 {
                numerator = numerator * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                denominator *= 10
            }
            index += 1
        }
        return index > start ? Double(numerator) / Double(denominator) : nil
    }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, UInt32(bytes[index]) == character.value else { return false }
        index += 1
        return true
    }

    /// Takes the next byte when it is one of the ASCII `characters` (no string is built: start-up parses 300,000 dates).
    mutating func take(oneOf characters: StaticString) -> Bool {
        guard index < bytes.count else { return false }
        for offset in 0..<characters.utf8CodeUnitCount where characters.utf8Start[offset] == bytes[index] {
            index += 1
            return true
        }
        return false
    }

    mutating func sign() -> Int? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }
}
