import Testing

@testable import BrokerHTTP

/// `ByteWriter` started in a caller's buffer keeps every byte when it outgrows it, and leaves the buffer's bytes past
/// what it wrote alone.
struct ByteWriterTests {
    @Test("a writer started in a lent buffer moves to its own when the bytes outgrow it, keeping them all")
    func outgrowsALentBuffer() {
        var lent = [UInt8](repeating: 0xEE, count: 40)
        lent.withUnsafeMutableBufferPointer { buffer in
            var writer = ByteWriter(startingIn: UnsafeMutableBufferPointer(rebasing: buffer[..<32]))
            var expected: [UInt8] = []
            for n in 0..<100 {
                let piece = [UInt8](repeating: UInt8(n), count: n % 7 + 1)
                piece.withUnsafeBufferPointer { writer.append($0) }
                expected += piece
                writer.append("-")
                expected.append(UInt8(ascii: "-"))
            }
            #expect(writer.bytes == expected)
            // Nothing was written past the part lent.
            #expect(buffer[32...].allSatisfy { $0 == 0xEE })
        }
    }

    @Test("a lent buffer too small to start in is not used")
    func tooSmallIsNotUsed() {
        var lent = [UInt8](repeating: 0xEE, count: 8)
        lent.withUnsafeMutableBufferPointer { buffer in
            var writer = ByteWriter(startingIn: buffer)
            writer.append("0123456789")
            #expect(writer.bytes == Array("0123456789".utf8))
            #expect(buffer.allSatisfy { $0 == 0xEE })
        }
    }
}
