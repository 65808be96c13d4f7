import Testing

@testable import BrokerCrypto

/// One ChaCha20 vector: key, counter and nonce, with the plaintext (empty for a bare block) and the expected output.
struct ChaCha20Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let counter: UInt32
    let nonce: String
    var input: String = ""
    let output: String
    var testDescription: String { name }
}

/// RFC 8439 §2.1–§2.4 and Appendix A.1, A.2, A.4 vectors for the ChaCha20 block function and cipher.
/// Every vector was also checked against pyca/cryptography before being pasted here.
struct ChaCha20Tests {
    static let blockVectors: [ChaCha20Vector] = [
        ChaCha20Vector(
            name: "RFC 8439 2.3.2", key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", counter: 1,
            nonce: "000000090000004a00000000",
            output: """
                10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e
                d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e
                """),
        ChaCha20Vector(
            name: "RFC 8439 2.6.2", key: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f", counter: 0,
            nonce: "000000000001020304050607",
            output: "8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646"),
        ChaCha20Vector(
            name: "RFC 8439 A.1#1", key: "0000000000000000000000000000000000000000000000000000000000000000", counter: 0,
            nonce: "000000000000000000000000",
            output: """
                76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7
                da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.1#2", key: "0000000000000000000000000000000000000000000000000000000000000000", counter: 1,
            nonce: "000000000000000000000000",
            output: """
                9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed
                29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.1#3", key: "0000000000000000000000000000000000000000000000000000000000000001", counter: 1,
            nonce: "000000000000000000000000",
            output: """
                3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a
                8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.1#4", key: "00ff000000000000000000000000000000000000000000000000000000000000", counter: 2,
            nonce: "000000000000000000000000",
            output: """
                72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca
                13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.1#5", key: "0000000000000000000000000000000000000000000000000000000000000000", counter: 0,
            nonce: "000000000000000000000002",
            output: """
                c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7
                8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.4#2", key: "0000000000000000000000000000000000000000000000000000000000000001", counter: 0,
            nonce: "000000000000000000000002",
            output: "ecfa254f845f647473d3cb140da9e87606cb33066c447b87bc2666dde3fbb739"),
        ChaCha20Vector(
            name: "RFC 8439 A.4#3", key: "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0", counter: 0,
            nonce: "000000000000000000000002",
            output: "965e3bc6f9ec7ed9560808f4d229f94b137ff275ca9b3fcbdd59deaad23310ae"),
    ]

    static let encryptionVectors: [ChaCha20Vector] = [
        ChaCha20Vector(
            name: "RFC 8439 2.4.2", key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", counter: 1,
            nonce: "000000000000004a00000000",
            input: "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
            output: """
                6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b
                f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8
                07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736
                5af90bbf74a35be6b40b8eedf2785e42874d
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.2#2", key: "0000000000000000000000000000000000000000000000000000000000000001", counter: 1,
            nonce: "000000000000000000000002",
            input:
                "Any submission to the IETF intended by the Contributor for publication as all or part of an IETF Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \"IETF Contribution\". Such statements include oral statements in IETF sessions, as well as written and electronic communications made at any time or place, which are addressed to",
            output: """
                a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec
                2a97948bd3722915c8f3d337f7d370050e9e96d647b7c39f56e031ca5eb6250d
                4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e527950
                42bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85a
                d00f8449ed8f72d0d662ab052691ca66424bc86d2df80ea41f43abf937d3259d
                c4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b
                0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6c
                cc3aaf9f3979c92b3720fc88dc95ed84a1be059c6499b9fda236e7e818b04b0b
                c39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f
                5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e6
                98ced759c3ff9b6477338f3da4f9cd8514ea9982ccafb341b2384dd902f3d1ab
                7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221
                """),
        ChaCha20Vector(
            name: "RFC 8439 A.2#3", key: "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0", counter: 42,
            nonce: "000000000000000000000002",
            input:
                "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe.",
            output: """
                62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf
                166d3df2d721caf9b21e5fb14c616871fd84c54f9d65b283196c7fe4f60553eb
                f39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77
                04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1
                """),
    ]

    @Test("RFC 8439 §2.1.1 quarter round")
    func quarterRound() {
        var a: UInt32 = 0x1111_1111, b: UInt32 = 0x0102_0304, c: UInt32 = 0x9b8d_6f43, d: UInt32 = 0x0123_4567
        ChaCha20.quarterRound(&a, &b, &c, &d)
        #expect([a, b, c, d] == [0xea2a_92f4, 0xcb1c_f8ce, 0x4581_472e, 0x5881_c4bb])
    }

    @Test("block function (§2.3.2, §2.6.2 key generation, A.1, A.4)", arguments: blockVectors)
    func block(vector: ChaCha20Vector) {
        let block = ChaCha20.block(key: bytes(vector.key), counter: vector.counter, nonce: bytes(vector.nonce))
        #expect(block.count == 64)
        let expected = bytes(vector.output)
        #expect(Array(block.prefix(expected.count)) == expected)
    }

    @Test("encryption (§2.4.2, A.2)", arguments: encryptionVectors)
    func encrypt(vector: ChaCha20Vector) {
        let key = bytes(vector.key), nonce = bytes(vector.nonce)
        let ciphertext = ChaCha20.xor(key: key, nonce: nonce, counter: vector.counter, ascii(vector.input))
        #expect(ciphertext == bytes(vector.output))
        #expect(ChaCha20.xor(key: key, nonce: nonce, counter: vector.counter, ciphertext) == ascii(vector.input))
    }

    @Test("A.2 #1: 64 zero bytes under the zero key give the block-0 keystream")
    func zeroPlaintext() {
        let out = ChaCha20.xor(
            key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12), counter: 0, [UInt8](repeating: 0, count: 64))
        #expect(out == bytes(Self.blockVectors[2].output))
    }

    @Test("the keystream continues across blocks whatever the split")
    func keystreamIsContinuous() {
        let key = bytes("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"), nonce = bytes("000000000000004a00000000")
        let whole = ChaCha20.xor(key: key, nonce: nonce, counter: 1, [UInt8](repeating: 0, count: 200))
        #expect(Array(whole[0..<64]) == ChaCha20.block(key: key, counter: 1, nonce: nonce))
        #expect(Array(whole[64..<128]) == ChaCha20.block(key: key, counter: 2, nonce: nonce))
        #expect(Array(whole[192..<200]) == Array(ChaCha20.block(key: key, counter: 4, nonce: nonce).prefix(8)))
        #expect(ChaCha20.xor(key: key, nonce: nonce, counter: 1, []) == [])
    }
}
