import Foundation
import Testing

@testable import BrokerCore

/// The RFC 3339 formatter and parser, checked against Foundation's ISO 8601 formatter.
struct RFC3339DateTests {
    @Test func datesBeyondFourDigitYearsAreWrittenAsTheNearestEndInsteadOfTrapping() {
        let latest = "9999-12-31T23:59:59Z", earliest = "0001-01-01T00:00:00Z"
        #expect(RFC3339Date.format(RFC3339Date.latest) == latest)
        #expect(RFC3339Date.format(RFC3339Date.earliest) == earliest)
        for beyond in [
            Date(timeIntervalSince1970: 9.3e18), Date.fixture.addingTimeInterval(TimeInterval(Int.max)),
            Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: .infinity),
        ] {
            #expect(RFC3339Date.format(beyond) == latest)
        }
        for before in [
            Date(timeIntervalSince1970: -9.3e18), .distantPast, Date(timeIntervalSince1970: -.infinity),
            Date(timeIntervalSince1970: .nan),
        ] {
            #expect(RFC3339Date.format(before) == earliest)
        }
        #expect(RFC3339Date.parse(latest) == RFC3339Date.latest)
    }

    @Test func logTimestampsAlwaysCarryMilliseconds() {
        #expect(RFC3339Date.formatWithMillis(.fixture) == "2026-11-30T08:00:00.000Z")
        #expect(RFC3339Date.formatWithMillis(Date.fixture.addingTimeInterval(0.25)) == "2026-11-30T08:00:00.250Z")
        #expect(RFC3339Date.parse(RFC3339Date.formatWithMillis(.fixture)) == .fixture)
    }

    @Test func formatsWholeSecondsWithoutFraction() {
        #expect(RFC3339Date.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339Date.format(.fixture) == "2026-11-30T08:00:00Z")
        #expect(RFC3339Date.format(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59Z")
        #expect(RFC3339Date.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(RFC3339Date.format(Date.fixture.addingTimeInterval(0.9996)) == "2026-11-30T08:00:01Z")
        #expect(RFC3339Date.format(Date.fixture.addingTimeInterval(0.25)) == "2026-11-30T08:00:00.250Z")
    }

    @Test func agreesWithFoundationOnRandomDates() throws {
        let formatter = ISO8601DateFormatter()
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: -2_000_000_000...8_000_000_000)))
            let text = RFC3339Date.format(date)
            #expect(text == formatter.string(from: date))
            #expect(RFC3339Date.parse(text) == date)
            #expect(formatter.date(from: text) == date)
        }
    }

    @Test func millisecondDatesSurviveRepeatedRoundTrips() throws {
        var date = Date.fixture.addingTimeInterval(0.123)
        let first = RFC3339Date.format(date)
        for _ in 0..<5 { date = try #require(RFC3339Date.parse(RFC3339Date.format(date))) }
        #expect(RFC3339Date.format(date) == first)
        #expect(first == "2026-11-30T08:00:00.123Z")
    }

    @Test func parsesOffsetsLowercaseAndSpace() {
        #expect(RFC3339Date.parse("2026-11-30T10:30:00+02:30") == .fixture)
        #expect(RFC3339Date.parse("2026-11-30T03:00:00-05:00") == .fixture)
        #expect(RFC3339Date.parse("2026-11-30t08:00:00z") == .fixture)
        #expect(RFC3339Date.parse("2026-11-30 08:00:00Z") == .fixture)
        #expect(RFC3339Date.parse("2024-02-29T00:00:00Z") != nil)
        #expect(RFC3339Date.parse("2016-12-31T23:59:60Z") == RFC3339Date.parse("2017-01-01T00:00:00Z"))
    }

    @Test(arguments: [
        "", "2026-11-30", "2026-11-30T08:00:00", "2026-11-30T08:00Z", "2026-13-01T00:00:00Z",
        "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T08:60:00Z",
        "2026-11-30T08:00:00.Z", "2026-11-30T08:00:00Zjunk", "2026-11-30T08:00:00+0100", "+2026-11-30T08:00:00Z",
        // The fixed form whole seconds are written in, with one field out of range or one digit not a digit.
        "2026-00-10T08:00:00Z", "2026-11-00T08:00:00Z", "2026-11-30T08:00:61Z", "2026-1/-30T08:00:00Z", "2026-11-3:T08:00:00Z",
        "20a6-11-30T08:00:00Z", "2026-11-30T08:00: 0Z", "2026-11-30T08-00:00Z",
    ])
    func rejectsMalformedText(text: String) {
        #expect(RFC3339Date.parse(text) == nil)
    }

    /// The fixed-offset reading of the form the broker writes (start-up's three dates per account) answers exactly
    /// as the general parser does: the same `Date` to the bit for every such text, nil for every text the general
    /// parser refuses; and it leaves every other form (offsets, longer fractions, `t`, `z`) to the general parser.
    @Test func writtenFormAgreesWithTheGeneralParserByteForByte() {
        func both(_ text: String) -> (fixed: Date?, general: Date?) {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBufferPointer { (RFC3339Date.parseWrittenForm($0), RFC3339Date.parseAnyForm(utf8: $0)) }
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789-T:.Zt z+/".utf8)
        for round in 0..<4_000 {
            let seconds = Double(Int.random(in: -62_135_596_800...253_402_300_799, using: &generator))
            let date = Date(timeIntervalSince1970: seconds + (round % 2 == 0 ? 0 : Double(Int.random(in: 0...999)) / 1000))
            let written = RFC3339Date.formatWithMillis(date)
            for text in [written, RFC3339Date.format(date)] {
                let (fixed, general) = both(text)
                #expect(fixed != nil && fixed == general, "\(text)")
                #expect(fixed?.timeIntervalSince1970.bitPattern == general?.timeIntervalSince1970.bitPattern)
                // One byte changed: whatever the general parser says, the fixed reading says the same or leaves it.
                var bytes = Array(text.utf8)
                bytes[Int.random(in: 0..<bytes.count)] = alphabet.randomElement()!
                let mutated = String(decoding: bytes, as: UTF8.self)
                let (mutatedFixed, mutatedGeneral) = both(mutated)
                if let mutatedFixed { #expect(mutatedFixed == mutatedGeneral, "\(mutated)") }
            }
        }
        // Leap seconds, month ends, and fields out of range, in the written form.
        for text in [
            "2016-12-31T23:59:60Z", "2016-12-31T23:59:60.500Z", "2024-02-29T00:00:00.000Z", "2025-02-29T00:00:00.000Z",
            "2026-04-31T00:00:00Z", "2026-13-01T00:00:00.000Z", "2026-00-01T00:00:00Z", "2026-11-30T24:00:00.000Z",
            "2026-11-30T08:60:00Z", "2026-11-30T08:00:61.000Z", "0000-01-01T00:00:00Z", "2026-11-30T08:00:00,000Z",
        ] {
            let (fixed, general) = both(text)
            #expect(fixed == general, "\(text)")
        }
        // Other forms are the general parser's alone.
        for text in ["2026-11-30t08:00:00z", "2026-11-30T10:30:00+02:30", "2026-11-30T08:00:00.1234Z", "2026-11-30T08:00:00.5Z"] {
            let (fixed, general) = both(text)
            #expect(fixed == nil && general != nil, "\(text)")
        }
    }
}

/// The byte-appending formatter writes after what the buffer already holds.
@Suite struct RFC3339DateAppendTests {
    @Test func appendsAfterExistingBytes() {
        var bytes = Array("at ".utf8)
        RFC3339Date.append(Date(timeIntervalSince1970: 1_796_025_600.25), to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "at 2026-11-30T08:00:00.250Z")
    }
}
