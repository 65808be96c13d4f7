import BrokerCore
import BrokerCrypto
import BrokerFileStore
import BrokerTestSupport
import Foundation
import Testing

/// `BROKER_ENCRYPTION_KEY` parsing, key ids, redaction and the generated key file.
struct EncryptionKeyringTests {
    private let keyA = EncryptedRecordFixtures.keyText()
    private let keyB = EncryptedRecordFixtures.keyText()

    @Test func singleKeyGetsAStableDerivedID() throws {
        let keyring = try EncryptionKeyring.parse(keyA)
        #expect(keyring.keys.count == 1)
        #expect(keyring.current.id.count == 8)
        #expect(keyring.current.id.allSatisfy { $0.isHexDigit })
        #expect(try EncryptionKeyring.parse(" \(keyA)\n").current.id == keyring.current.id)
        #expect(try EncryptionKeyring.parse(keyB).current.id != keyring.current.id)
        #expect(keyring.source == "BROKER_ENCRYPTION_KEY")
    }

    @Test func listNamesTheCurrentKeyFirstAndOlderKeysAfter() throws {
        let named = try EncryptionKeyring.parse("2027:\(keyB), 2026:\(keyA)")
        #expect(named.current.id == "2027")
        #expect(named.ids == ["2027", "2026"])
        #expect(named.key(id: "2026")?.id == "2026")
        #expect(named.key(id: "2025") == nil)

        let bare = try EncryptionKeyring.parse("\(keyB),\(keyA)")
        #expect(bare.ids == [try EncryptionKeyring.parse(keyB).current.id, try EncryptionKeyring.parse(keyA).current.id])
    }

    @Test func base64URLKeysAreAccepted() throws {
        let bytes = SecureRandom.bytes(32)
        let standard = try EncryptionKeyring.parse(Base64.encode(bytes))
        let url = try EncryptionKeyring.parse(Base64URL.encode(bytes))
        #expect(url.current.id == standard.current.id)
    }

    @Test(
        arguments: [
            ("", nil, "is empty"),
            (" , ", nil, "is empty"),
            ("k1:<A>,,k2:<B>", 2, "is empty (a stray comma?)"),
            ("k1:<A>,k2:not*base64", 2, "the key is not valid base64"),
            ("k1:<A>,k2:<SHORT>", 2, "the key is 31 bytes, it must be 32"),
            ("k1:<LONG>", 1, "the key is 33 bytes, it must be 32"),
            ("k1:<A>,k1:<B>", 2, "key id \"k1\" is already used by entry 1"),
            ("<A>,<A>", 2, "is already used by entry 1"),
            ("bad id:<A>", 1, "the key id must be 1 to 64 letters"),
            (":<A>", 1, "the key id must be 1 to 64 letters"),
        ] as [(String, Int?, String)])
    func badSettingIsRefusedNamingTheEntryButNoKeyText(pattern: String, entry: Int?, problem: String) throws {
        let short = Base64.encode(SecureRandom.bytes(31))
        let long = Base64.encode(SecureRandom.bytes(33))
        let value = pattern.replacingOccurrences(of: "<SHORT>", with: short).replacingOccurrences(of: "<LONG>", with: long)
            .replacingOccurrences(of: "<A>", with: keyA).replacingOccurrences(of: "<B>", with: keyB)
        #expect {
            _ = try EncryptionKeyring.parse(value)
        } throws: { error in
            guard let error = error as? EncryptionKeyError else { return false }
            let text = error.description
            let prefix = entry.map { "BROKER_ENCRYPTION_KEY entry \($0): " } ?? "BROKER_ENCRYPTION_KEY: "
            return error.entry == entry && text.hasPrefix(prefix) && text.contains(problem)
                && ![keyA, keyB, short, long].contains { text.contains($0) }
        }
    }

    @Test func descriptionsAndDumpsNeverShowKeyBytes() throws {
        let bytes = SecureRandom.bytes(32)
        let keyring = try EncryptionKeyring.parse("current:\(Base64.encode(bytes)),old:\(keyA)")
        var dumped = ""
        dump(keyring, to: &dumped)
        dump(keyring.current, to: &dumped)
        let printed = [String(describing: keyring), String(reflecting: keyring.current), "\(keyring.keys)", dumped]
        for text in printed {
            #expect(!text.contains(Base64.encode(bytes)) && !text.contains(Hex.encode(bytes)) && !text.contains(keyA))
        }
        #expect(String(describing: keyring).contains("current: current"))
        #expect(dumped.contains("old"))
    }

    // MARK: Generated key file

    @Test func environmentValueWinsAndNoKeyFileIsMade() async throws {
        try await TemporaryDirectory.with { directory in
            let loaded = try EncryptionKeyring.loadOrGenerate(environmentValue: "k1:\(keyA)", dataDirectory: directory + "/data")
            #expect(!loaded.generated)
            #expect(loaded.keyring.ids == ["k1"])
            #expect(FileProbe.names(directory).isEmpty)
        }
    }

    @Test func keyFileIsGeneratedOnceWith0600AndReused() async throws {
        try await TemporaryDirectory.with { directory in
            let data = directory + "/data"
            let fixed = SecureRandom.bytes(32)
            let first = try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: data) { count in
                #expect(count == 32)
                return fixed
            }
            let second = try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: data) { _ in
                Issue.record("a second key was generated")
                return SecureRandom.bytes(32)
            }
            let path = data + "/encryption-key"
            #expect(first.generated && second.generated)
            #expect(second.keyring.current.id == first.keyring.current.id)
            #expect(FileProbe.mode(path) == 0o600)
            #expect(FileProbe.mode(data) == 0o700)
            #expect(first.keyring.source == path)
            let content = String(decoding: try #require(FileProbe.bytes(path)), as: UTF8.self)
            #expect(content == Base64.encode(fixed) + "\n")
            // The file's content works as BROKER_ENCRYPTION_KEY, with the same key id.
            let moved = try EncryptionKeyring.loadOrGenerate(environmentValue: content, dataDirectory: data)
            #expect(moved.keyring.current.id == first.keyring.current.id && !moved.generated)
        }
    }

    @Test func damagedKeyFileIsRefusedNamingIt() async throws {
        try await TemporaryDirectory.with { directory in
            let secret = Base64.encode(SecureRandom.bytes(16))
            try FileProbe.plant(secret + "\n", at: directory + "/encryption-key")
            #expect {
                _ = try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: directory)
            } throws: { error in
                let text = "\(error)"
                return error is EncryptionKeyError && text.hasPrefix(directory + "/encryption-key entry 1: the key is 16 bytes")
                    && !text.contains(secret)
            }
        }
    }

    /// No key is generated over sealed accounts whose key is gone: every layout says so, and plaintext accounts of a
    /// version from before encryption at rest (which the broker seals at its start) still get their first key.
    @Test func noKeyIsGeneratedOverSealedAccounts() async throws {
        let sealedLine = #"{"id":"acme:1","provider":"acme","encryption":"chacha20-poly1305","access_token":"v1.k1.AAAA"}"#
        let cases: [(file: String, content: String, sealed: Bool)] = [
            ("accounts.sealed", "{}\n", true),
            (
                "accounts.snapshot.jsonl",
                #"{"snapshot":"token-broker accounts","version":1,"journal":1,"accounts":1}"# + "\n" + sealedLine + "\n", true
            ),
            ("accounts.journal.3.jsonl", #"{"put":"# + sealedLine + "}\n", true),
            // The former layout's files were pretty-printed: a blank before the colon.
            ("accounts/acme%3A1.json", "{\n  \"encryption\" : \"chacha20-poly1305\",\n  \"id\" : \"acme:1\"\n}\n", true),
            ("accounts/acme%3A1.json", "{\n  \"access_token\" : \"plain\",\n  \"id\" : \"acme:1\"\n}\n", false),
            // "encryption" as a value is no sealed record.
            ("accounts.journal.1.jsonl", #"{"put":{"id":"acme:2","scope":"encryption","access_token":"plain"}}"# + "\n", false),
        ]
        for (file, content, sealed) in cases {
            try await TemporaryDirectory.with { directory in
                let data = directory + "/data"
                try FileManager.default.createDirectory(
                    atPath: data + (file.hasPrefix("accounts/") ? "/accounts" : ""), withIntermediateDirectories: true)
                try FileProbe.plant(content, at: data + "/" + file)
                let keyFile = data + "/" + EncryptionKeyring.keyFileName
                if sealed {
                    #expect {
                        _ = try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: data)
                    } throws: { error in
                        let text = "\(error)"
                        return text.contains("missing encryption key: \(data) holds sealed accounts")
                            && text.contains("BROKER_ENCRYPTION_KEY is not set and there is no key file at \(keyFile)")
                    }
                    #expect(!FileManager.default.fileExists(atPath: keyFile), "\(file)")
                    // The variable, or the key file put back, is all it needs.
                    #expect(try !EncryptionKeyring.loadOrGenerate(environmentValue: keyA, dataDirectory: data).generated)
                } else {
                    #expect(try EncryptionKeyring.loadOrGenerate(environmentValue: nil, dataDirectory: data).generated, "\(file)")
                    #expect(FileManager.default.fileExists(atPath: keyFile), "\(file)")
                }
            }
        }
    }
}
