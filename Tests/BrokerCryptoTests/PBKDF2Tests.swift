import BrokerCrypto
import Foundation
import Testing

/// PBKDF2-HMAC-SHA256 against published vectors.
struct PBKDF2Tests {
    @Test("RFC 7914 §11 PBKDF2-HMAC-SHA256, one iteration, 64 bytes")
    func rfc7914OneIteration() {
        let derived = PBKDF2.sha256(password: ascii("passwd"), salt: ascii("salt"), iterations: 1, length: 64)
        #expect(
            Hex.encode(derived)
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
        )
    }

    @Test("RFC 7914 §11 PBKDF2-HMAC-SHA256, 80,000 iterations, 64 bytes")
    func rfc7914ManyIterations() async {
        // Seconds of work in a debug build: on a thread of its own, so the test run's cooperative pool (one thread
        // per core) keeps serving the other tests meanwhile.
        let derived = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: PBKDF2.sha256(password: ascii("Password"), salt: ascii("NaCl"), iterations: 80_000, length: 64))
            }.start()
        }
        #expect(
            Hex.encode(derived)
                == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
        )
    }

    @Test(
        "the commonly published password/salt vectors, 32 bytes (one block)",
        arguments: [
            (1, "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"),
            (2, "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"),
            (4096, "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"),
        ])
    func common(iterations: Int, expected: String) {
        #expect(Hex.encode(PBKDF2.sha256(password: ascii("password"), salt: ascii("salt"), iterations: iterations, length: 32)) == expected)
    }

    @Test("a length that is not a whole block is the prefix of the longer output")
    func partialBlock() {
        let long = PBKDF2.sha256(password: ascii("passwd"), salt: ascii("salt"), iterations: 1, length: 64)
        #expect(PBKDF2.sha256(password: ascii("passwd"), salt: ascii("salt"), iterations: 1, length: 40) == Array(long.prefix(40)))
        #expect(PBKDF2.sha256(password: ascii("passwd"), salt: ascii("salt"), iterations: 1, length: 0).isEmpty)
    }
}
