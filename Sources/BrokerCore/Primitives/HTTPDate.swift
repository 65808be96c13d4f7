import Foundation

/// Parses HTTP-date timestamps (RFC 9110 §5.6.7) as providers send them in `Retry-After`.
///
/// RFC 9110 §5.6.7: a recipient that parses a timestamp MUST accept all three
/// formats: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850
/// form (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C's asctime
/// (`Sun Nov  6 08:49:37 1994`). That is the only leniency: names and `GMT` are
/// case-sensitive, fields have fixed widths, and a day that the month does not
/// have is refused. The day name is not checked against the date, which the
/// RFC does not ask of a recipient.
public enum HTTPDate {
    /// `day-name` (RFC 9110 §5.6.7), Monday first.
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    /// `day-name-l`, the RFC 850 form's full day names, Monday first.
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    /// `month`, January first.
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The instant `text` names in any of the three formats, or nil when it is none of them.
    ///
    /// `now` places an RFC 850 two-digit year: RFC 9110 §5.6.7 reads a year
    /// more than 50 years in the future as the most recent past year with the
    /// same last two digits.
    public static func parse(_ text: String, now: Date) -> Date? {
        let bytes = Array(text.utf8)
        // The longest valid form, RFC 850 with "Wednesday", is 37 bytes.
        guard bytes.count <= 40 else { return nil }
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    /// `day-name "," SP 2DIGIT SP month SP 4DIGIT SP time-of-day SP "GMT"`.
    static func imfFixdate(_ bytes: [UInt8]) -> Date? {
        var c = DateCursor(bytes)
        guard c.name(dayNames) != nil, c.literal(", "), let day = c.digits(2), c.literal(" "),
            let month = c.name(monthNames), c.literal(" "), let year = c.digits(4), c.literal(" "),
            let time = c.timeOfDay(), c.literal(" GMT"), c.atEnd
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    /// `day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time-of-day SP "GMT"`.
    static func rfc850(_ bytes: [UInt8], now: Date) -> Date? {
        var c = DateCursor(bytes)
        guard c.name(longDayNames) != nil, c.literal(", "), let day = c.digits(2), c.literal("-"),
            let month = c.name(monthNames), c.literal("-"), let shortYear = c.digits(2), c.literal(" "),
            let time = c.timeOfDay(), c.literal(" GMT"), c.atEnd
        else { return nil }
        let currentYear = RFC3339Date.civil(fromDays: Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP 4DIGIT`.
    static func asctime(_ bytes: [UInt8]) -> Date? {
        var c = DateCursor(bytes)
        guard c.name(dayNames) != nil, c.literal(" "), let month = c.name(monthNames), c.literal(" ") else { return nil }
        let day: Int?
        if c.literal(" ") { day = c.digits(1) } else { day = c.digits(2) }
        guard let day, c.literal(" "), let time = c.timeOfDay(), c.literal(" "), let year = c.digits(4), c.atEnd else { return nil }
        return date(year: year, month: month + 1, day: day, time: time)
    }

    /// The instant of a checked calendar date and time of day in UTC.
    static func date(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        guard (1...RFC3339Date.daysIn(month: month, year: year)).contains(day) else { return nil }
        let days = RFC3339Date.days(fromCivil: year, month, day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second))
    }
}

/// A cursor over the ASCII bytes of an HTTP-date.
private struct DateCursor {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// Consumes `text` when the bytes continue with it exactly.
    mutating func literal(_ text: String) -> Bool {
        let wanted = Array(text.utf8)
        guard bytes.count - index >= wanted.count, bytes[index..<index + wanted.count].elementsEqual(wanted) else { return false }
        index += wanted.count
        return true
    }

    /// Consumes one of `names` and returns its position; the longest candidates never share a prefix here.
    mutating func name(_ names: [String]) -> Int? {
        for (position, name) in names.enumerated() where literal(name) { return position }
        return nil
    }

    /// Consumes exactly `count` ASCII digits.
    mutating func digits(_ count: Int) -> Int? {
        guard bytes.count - index >= count else { return nil }
        var value = 0
        for byte in bytes[index..<index + count] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += count
        return value
    }

    /// `hour ":" minute ":" second`, two digits each; a leap second (60) is allowed.
    mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
        guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        return (hour, minute, second)
    }
}
