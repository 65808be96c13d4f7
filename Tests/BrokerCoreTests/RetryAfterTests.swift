import BrokerCore
import Foundation
import Testing

/// `Retry-After` parsing (RFC 9110 §10.2.3): both forms, and provider garbage that must never trap.
struct RetryAfterTests {
    /// 2026-11-30T08:00:00Z, a Monday.
    static let now = Date(timeIntervalSince1970: 1_796_025_600)

    @Test(arguments: [("120", 120.0), ("0", 0), (" 7\t", 7), ("0000042", 42)])
    func deltaSecondsAreWholeSeconds(field: String, seconds: Double) {
        #expect(RetryAfter.delay(field, at: Self.now) == seconds)
    }

    @Test func theThreeHTTPDateFormsNameTheSameInstant() {
        // RFC 9110 §5.6.7: IMF-fixdate, the obsolete RFC 850 form and asctime must all be accepted.
        for field in ["Mon, 30 Nov 2026 08:02:00 GMT", "Monday, 30-Nov-26 08:02:00 GMT", "Mon Nov 30 08:02:00 2026"] {
            #expect(RetryAfter.delay(field, at: Self.now) == 120, "\(field)")
        }
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994", now: Self.now) == HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now))
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.now) == Date(timeIntervalSince1970: 784_111_777))
    }

    @Test func anRFC850YearMoreThanFiftyYearsAheadIsInThePast() {
        // In 2026, "94" is 1994, not 2094; "76" is 2076.
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Self.now) == Date(timeIntervalSince1970: 784_111_777))
        let in2076 = HTTPDate.parse("Friday, 06-Nov-76 08:49:37 GMT", now: Self.now)
        #expect(in2076.map { $0 > Self.now } == true)
    }

    @Test func aDateInThePastMeansNow() {
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", at: Self.now) == 0)
    }

    @Test func hugeDelaysSaturateInsteadOfTrapping() {
        #expect(RetryAfter.delay("99999999999999999999", at: Self.now) == RetryAfter.saturation)
        #expect(RetryAfter.delay(String(repeating: "9", count: 10_000), at: Self.now) == RetryAfter.saturation)
        // The latest date four digits can name is far off but finite; the coordinator clamps it to its cap.
        #expect(RetryAfter.delay("Fri, 31 Dec 9999 23:59:59 GMT", at: Self.now) == 253_402_300_799 - Self.now.timeIntervalSince1970)
    }

    @Test(arguments: [
        "-5", "soon", "", "  ", "1.5", "+5", "5s", "0x10", "١٢٣", "120, 60",
        "mon, 30 Nov 2026 08:02:00 GMT", "Mon, 30 Nov 2026 08:02:00 gmt", "Mon, 30 nov 2026 08:02:00 GMT",
        "Mon, 30 Nov 2026 08:02:00 UTC", "Mon, 30 Nov 2026 08:02:00 +0000", "Mon,  30 Nov 2026 08:02:00 GMT",
        "Mon, 31 Nov 2026 08:02:00 GMT", "Mon, 29 Feb 2026 08:02:00 GMT", "Mon, 30 Nov 2026 24:00:00 GMT",
        "Mon, 30 Nov 2026 08:60:00 GMT", "Mon, 30 Nov 2026 08:02:61 GMT", "Mon, 00 Nov 2026 08:02:00 GMT",
        "Mon, 30 Nov 26 08:02:00 GMT", "Mon, 30-Nov-26 08:02:00 GMT", "Mon Nov 30 08:02:00 26",
        "Mon, 30 Nov 2026 08:02:00 GMT trailing", "2026-11-30T08:02:00Z",
    ])
    func anythingElseIsIgnored(field: String) {
        #expect(RetryAfter.delay(field, at: Self.now) == nil)
    }
}
