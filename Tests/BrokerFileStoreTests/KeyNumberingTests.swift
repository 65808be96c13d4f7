import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// The table that numbers end users at start-up gives the numbers a dictionary would, whatever the ids and the seed.
struct KeyNumberingTests {
    /// Numbers ids in order of first appearance, as `[ExactKey: Int32]` with a default of the next number did.
    private static func reference(_ ids: [String]) -> [Int32] {
        var numbers: [ExactKey: Int32] = [:]
        return ids.map { id in
            if let number = numbers[ExactKey(id)] { return number }
            numbers[ExactKey(id)] = Int32(numbers.count)
            return Int32(numbers.count - 1)
        }
    }

    @Test(arguments: [0, 1, 0xDEAD_BEEF, UInt64.max])
    func numbersInOrderOfFirstAppearanceAsADictionaryWould(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        // Ids of every length around the word size (empty, short, small strings, long ones), repeated in random order,
        // and ids that differ only in a trailing zero byte or in canonically equivalent spellings.
        var ids: [String] = []
        for length in 0...40 {
            for _ in 0..<60 {
                ids.append(String((0..<length).map { _ in "ab\u{0}é:".randomElement(using: &random)! }))
            }
        }
        ids += ["café", "cafe\u{301}", "K", "\u{212A}", "a", "a\u{0}", "a\u{0}\u{0}", "user-1", "user-10"]
        let sequence = (0..<20_000).map { _ in ids.randomElement(using: &random)! } + ids
        // A small start, so the table grows several times on the way.
        var numbering = KeyNumbering(expected: 4, seed: seed)
        var isNewSeen = Set<Int32>()
        var numbers: [Int32] = []
        for id in sequence {
            let (number, isNew) = numbering.number(of: ExactKey(id))
            #expect(isNew == isNewSeen.insert(number).inserted, "\(id)")
            numbers.append(number)
        }
        #expect(numbers == Self.reference(sequence))
        var firstAppearances: [ExactKey] = []
        var seen = Set<ExactKey>()
        for id in sequence where seen.insert(ExactKey(id)).inserted { firstAppearances.append(ExactKey(id)) }
        #expect(numbering.keys == firstAppearances)
        #expect(numbering.count == Set(sequence.map(ExactKey.init)).count)
    }
}

/// SplitMix64, so each seed's ids are the same from run to run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
