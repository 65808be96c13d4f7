import BrokerCrypto
import Testing

/// RFC 2202 (HMAC-SHA1) and RFC 4231 (HMAC-SHA256) test cases.
struct HMACTests {
    private static let bigKey80 = [UInt8](repeating: 0xaa, count: 80)
    private static let bigKey131 = [UInt8](repeating: 0xaa, count: 131)
    private static let key25 = (UInt8(1)...UInt8(25)).map { $0 }

    @Test(
        "RFC 2202 HMAC-SHA1 test cases 1-7",
        arguments: [
            ([UInt8](repeating: 0x0b, count: 20), ascii("Hi There"), "b617318655057264e28bc0b6fb378c8ef146be00"),
            (ascii("Jefe"), ascii("what do ya want for nothing?"), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
            ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
            (key25, [UInt8](repeating: 0xcd, count: 50), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
            ([UInt8](repeating: 0x0c, count: 20), ascii("Test With Truncation"), "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
            (bigKey80, ascii("Test Using Larger Than Block-Size Key - Hash Key First"), "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
            (
                bigKey80, ascii("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"),
                "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"
            ),
        ])
    func rfc2202(key: [UInt8], message: [UInt8], mac: String) {
        #expect(Hex.encode(HMAC.sha1(key: key, message: message)) == mac)
    }

    @Test(
        "RFC 4231 HMAC-SHA256 test cases 1-4, 6 and 7",
        arguments: [
            ([UInt8](repeating: 0x0b, count: 20), ascii("Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (ascii("Jefe"), ascii("what do ya want for nothing?"), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            (
                [UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
            ),
            (key25, [UInt8](repeating: 0xcd, count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
            (
                bigKey131, ascii("Test Using Larger Than Block-Size Key - Hash Key First"),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
            (
                bigKey131,
                ascii(
                    "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm."
                ),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
            ),
        ])
    func rfc4231(key: [UInt8], message: [UInt8], mac: String) {
        #expect(Hex.encode(HMAC.sha256(key: key, message: message)) == mac)
    }

    @Test("RFC 4231 test case 5, truncated to 128 bits")
    func rfc4231Truncated() {
        let mac = HMAC.sha256(key: [UInt8](repeating: 0x0c, count: 20), message: ascii("Test With Truncation"))
        #expect(Hex.encode(Array(mac.prefix(16))) == "a3b6167473100ee06e0c796c2955552b")
    }

    @Test("a key of exactly one block is used as is, one byte more is hashed first")
    func blockSizedKeys() {
        let key64 = [UInt8](repeating: 0x42, count: 64)
        let key65 = key64 + [0x42]
        let message = ascii("message")
        #expect(HMAC.sha256(key: key64, message: message) != HMAC.sha256(key: key65, message: message))
        // RFC 2104 §2: a long key and its hash are the same HMAC key.
        #expect(HMAC.sha256(key: key65, message: message) == HMAC.sha256(key: SHA256.hash(key65), message: message))
        #expect(HMAC.sha1(key: key65, message: message) == HMAC.sha1(key: SHA1.hash(key65), message: message))
    }
}
