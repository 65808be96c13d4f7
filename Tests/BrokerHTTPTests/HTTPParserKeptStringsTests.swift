import Testing

@testable import BrokerHTTP

/// What a connection's parser keeps of its previous request's long fields (``HTTPParser/KeptStrings``): a bounded
/// amount, whatever the request carried.
struct HTTPParserKeptStringsTests {
    /// Takes `value` as the long string at `place`, as the parser does for a field.
    private func take(_ kept: inout HTTPParser.KeptStrings, _ value: String, place: Int) -> String {
        let bytes = Array(value.utf8)
        return bytes.withUnsafeBufferPointer { kept.string($0, 0, $0.count, place: place) }
    }

    @Test func aValueTooLongToKeepIsMadeEachTimeAndHoldsNothing() {
        var kept = HTTPParser.KeptStrings()
        let big = String(repeating: "j", count: HTTPParser.KeptStrings.longest + 1)
        let key = "Bearer bench-api-key-0123456789abcdef"
        #expect(take(&kept, big, place: 0) == big)
        #expect(take(&kept, key, place: 1) == key)
        // The long one's place is held by an empty string; the key is kept for the next request.
        #expect(kept.strings == ["", key])
        #expect(take(&kept, big, place: 0) == big)
        #expect(take(&kept, key, place: 1) == key)
        #expect(kept.strings == ["", key])
        // A value that replaces a kept one is kept only when short enough.
        #expect(take(&kept, big + "x", place: 1) == big + "x")
        #expect(kept.strings == ["", ""])
    }

    @Test func noMoreThanCapacityStringsAreKept() {
        var kept = HTTPParser.KeptStrings()
        for place in 0..<(HTTPParser.KeptStrings.capacity + 4) {
            let value = "X-Trace-Value-Number-\(place)"
            #expect(take(&kept, value, place: place) == value)
        }
        #expect(kept.strings.count == HTTPParser.KeptStrings.capacity)
        #expect(kept.strings.allSatisfy { $0.utf8.count <= HTTPParser.KeptStrings.longest })
    }
}
