import Foundation
import Testing

@testable import BrokerHTTP

/// JSON string literals written by `JSONString`: whatever a string holds, and wherever in it (the scan for bytes to
/// escape looks at eight bytes at a time), the bytes written read back as the same string and hold no raw control
/// byte or DEL.
struct JSONStringTests {
    /// Every byte that needs an escape, and a few that do not (space, `/`, `'`, the top of ASCII and a UTF-8 lead).
    static let bytes: [UInt8] = Array(0x00...0x1F) + [0x22, 0x5C, 0x7F, 0x20, 0x2F, 0x27, 0x7E]

    @Test("a byte that needs escaping is escaped at every position of strings up to 20 bytes long")
    func everyPosition() throws {
        for length in 1...20 {
            for position in 0..<length {
                for byte in Self.bytes {
                    var utf8 = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    utf8[position] = byte
                    let text = String(decoding: utf8, as: UTF8.self)
                    var writer = ByteWriter(capacity: 16)
                    JSONString.appendQuoted(text, to: &writer)
                    let written = writer.bytes
                    #expect(!written.contains { $0 < 0x20 || $0 == 0x7F }, "length \(length), byte \(byte) at \(position)")
                    let read = try JSONDecoder().decode(String.self, from: Data(written))
                    #expect(read == text, "length \(length), byte \(byte) at \(position)")
                    #expect(JSONString.needsEscaping(text) == (byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F))
                }
            }
        }
    }

    @Test("plain text, non-ASCII included, is copied as it is between the quotes")
    func plainIsCopied() {
        for text in ["", "a", "weibo:12345", "bearer-token-0123456789abcdef-0123456789", "café ☃ 𝄞 over eight bytes"] {
            var writer = ByteWriter(capacity: 16)
            JSONString.appendQuoted(text, to: &writer)
            #expect(writer.bytes == [0x22] + Array(text.utf8) + [0x22])
        }
    }
}
