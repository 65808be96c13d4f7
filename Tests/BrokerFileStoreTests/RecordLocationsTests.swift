import BrokerCore
import Testing

@testable import BrokerFileStore

/// Where each account's record lies: a snapshot's locations in id order, changes beside them, merged in id order.
struct RecordLocationsTests {
    private static func location(_ file: UInt32, _ offset: Int) -> RecordLocation {
        RecordLocation(file: file, length: 10, offset: offset)
    }

    @Test func changesOverlayTheSortedPartAndMergeInIdOrder() {
        var locations = RecordLocations(file: 1, capacity: 4)
        // Byte order, as a snapshot holds them.
        for (offset, id) in ["a:1", "a:10", "a:2", "b:1"].enumerated() {
            locations.appendSorted(ExactKey(id), offset: offset * 100, length: 10)
        }
        #expect(locations.count == 4 && locations.lastSorted == ExactKey("b:1"))
        #expect(locations[ExactKey("a:10")] == Self.location(1, 100))
        #expect(locations[ExactKey("a:3")] == nil && locations[ExactKey("0")] == nil && locations[ExactKey("c")] == nil)

        let captured = locations
        locations[ExactKey("a:2")] = nil
        locations[ExactKey("a:10")] = Self.location(2, 0)
        locations[ExactKey("a:0")] = Self.location(2, 50)
        locations[ExactKey("c:1")] = Self.location(2, 90)
        locations[ExactKey("a:11")] = nil  // never held: nothing changes
        #expect(locations.count == 5)
        #expect(locations[ExactKey("a:2")] == nil && locations[ExactKey("a:10")] == Self.location(2, 0))
        #expect(
            locations.ordered().map(\.key.string) == ["a:0", "a:1", "a:10", "b:1", "c:1"]
                && locations.ordered().map(\.location) == [
                    Self.location(2, 50), Self.location(1, 0), Self.location(2, 0), Self.location(1, 300), Self.location(2, 90),
                ])
        #expect(captured.count == 4 && captured[ExactKey("a:2")] == Self.location(1, 200))

        // A snapshot written from the captured copy: accounts changed since stay where they are now.
        var written = RecordLocations(file: 3, capacity: 4)
        for (offset, entry) in captured.ordered().enumerated() { written.appendSorted(entry.key, offset: offset * 7, length: 10) }
        let rebased = locations.rebased(on: written, capturedAs: captured)
        #expect(rebased[ExactKey("a:1")] == Self.location(3, 0) && rebased[ExactKey("b:1")] == Self.location(3, 21))
        #expect(rebased[ExactKey("a:2")] == nil && rebased[ExactKey("a:10")] == Self.location(2, 0))
        #expect(rebased[ExactKey("a:0")] == Self.location(2, 50) && rebased.count == 5)
    }
}
