import Foundation
import Testing

@testable import BrokerCore

/// JSON `true`/`false` told apart from the numbers `JSONSerialization` returns in the same `NSNumber` type.
struct JSONBooleanTests {
    /// The value of `"v"` in `{"v": <json>}` as JSONSerialization reads it.
    static func parsed(_ json: String) throws -> Any {
        let object = try JSONSerialization.jsonObject(with: Data("{\"v\": \(json)}".utf8)) as? [String: Any]
        return try #require(object?["v"])
    }

    @Test func trueAndFalseAreBooleans() throws {
        #expect(JSONBoolean.value(try Self.parsed("true")) == true)
        #expect(JSONBoolean.value(try Self.parsed("false")) == false)
        #expect(JSONBoolean.number(try Self.parsed("true")) == nil)
    }

    @Test(arguments: ["0", "1", "-1", "1.0", "0.5", "1e3", "9007199254740993"])
    func numbersAreNotBooleans(json: String) throws {
        let value = try Self.parsed(json)
        #expect(JSONBoolean.value(value) == nil, "\(json)")
        #expect(JSONBoolean.number(value) != nil, "\(json)")
    }

    @Test(arguments: [#""true""#, #""false""#, "null", "[]", "{}", #""1""#])
    func otherValuesAreNeither(json: String) throws {
        let value = try Self.parsed(json)
        #expect(JSONBoolean.value(value) == nil, "\(json)")
        #expect(JSONBoolean.number(value) == nil, "\(json)")
        #expect(JSONBoolean.value(nil) == nil)
    }
}
