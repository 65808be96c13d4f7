import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore

/// The hand-written record reader agrees with JSONDecoder on every record it accepts, and declines the rest.
struct AccountRecordScannerTests {
    private static let path = "/data/accounts/x.json"
    /// Pieces of strings that need care in JSON: quotes, escapes, control characters, multi-byte and astral characters.
    /// (U+FEFF never starts a string: Linux JSONSerialization, which `restyled` reads with, drops it there; JSONDecoder does not.)
    private static let pieces = [
        "a", "Z", "0", "9", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "中",
        "😀", "\u{2028}", "a\u{FEFF}", "%", ":", "{", "}", "[", ",", "null", "\\u0041", "tb1|",
    ]

    private static func text(_ random: inout SeededGenerator, minimum: Int = 0) -> String {
        (0..<Int.random(in: minimum...10, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    /// A date exactly representable in a Double, with or without a fraction, from 1970 to 2096.
    private static func date(_ random: inout SeededGenerator) -> Date {
        Date(
            timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &random))
                + [0, 0.5, 0.25, 0.125].randomElement(using: &random)!)
    }

    private static func account(_ random: inout SeededGenerator) -> Account {
        func maybe<T>(_ make: (inout SeededGenerator) -> T) -> T? { Bool.random(using: &random) ? make(&random) : nil }
        return Account(
            provider: text(&random, minimum: 1), uid: text(&random, minimum: 1), accessToken: Secret(text(&random)),
            tokenType: maybe { text(&$0) }, scope: maybe { text(&$0) }, refreshToken: maybe { Secret(text(&$0)) },
            tokenSecret: maybe { Secret(text(&$0)) }, screenName: maybe { text(&$0) }, expiresAt: maybe(date),
            createdAt: date(&random), updatedAt: date(&random), refreshedAt: maybe(date),
            status: AccountStatus.allCases.randomElement(using: &random)!, issuedAt: maybe(date),
            refreshTokenExpiresAt: maybe(date), idToken: maybe { Secret(text(&$0)) }, extras: maybe { text(&$0) })
    }

    /// `bytes` rewritten in a random style: member order, spacing, escapes, and `null` for some absent optional members.
    private static func restyled(_ bytes: [UInt8], _ random: inout SeededGenerator) throws -> (bytes: [UInt8], escapesASCII: Bool) {
        var orderRandom = SeededGenerator(seed: random.next())
        let order = Int.random(in: 0..<3, using: &random)
        let parsed = try JSONText.from(bytes) { names in
            order == 0 ? names.sorted() : order == 1 ? names.sorted().reversed() : names.shuffled(using: &orderRandom)
        }
        guard case .object(var members) = parsed else { throw StoreTestError("not an object") }
        for name in [
            "scope", "token_type", "refresh_token", "token_secret", "screen_name", "expires_at", "refreshed_at", "issued_at",
            "refresh_token_expires_at", "id_token", "extras",
        ]
        where !members.contains(where: { $0.name == name }) && Bool.random(using: &random) {
            members.insert(JSONMember(name: name, value: .null), at: Int.random(in: 0...members.count, using: &random))
        }
        let style = JSONTextStyle(
            escapeNonASCII: Bool.random(using: &random), escapeSlash: Bool.random(using: &random),
            escapeEveryNthASCII: [0, 0, 0, 3, 11].randomElement(using: &random)!,
            space: ["", " ", "\n  ", "\t\r\n "].randomElement(using: &random)!)
        return (JSONText.object(members).bytes(style), style.escapeEveryNthASCII > 0)
    }

    private static func jsonDecoder(_ bytes: [UInt8]) -> AccountRecord<EncryptedFieldValue>? {
        try? JSONDecoder().decode(AccountRecord<EncryptedFieldValue>.self, from: Data(bytes))
    }

    /// The key id, nonce and sealed bytes of each secret, for comparing two stored accounts.
    private static func parts(_ sealed: SealedSecrets?) -> [[UInt8]] {
        guard let sealed else { return [] }
        return [sealed.accessToken, sealed.refreshToken, sealed.tokenSecret, sealed.idToken].flatMap { secret in
            secret.map { [Array($0.key.id.utf8), $0.nonce, $0.sealed] } ?? [[]]
        }
    }

    @Test func readsVariedRecordsExactlyAsJSONDecoder() throws {
        let sealing = try EncryptedRecordFixtures.codec(EncryptedRecordFixtures.keyText())
        for seed in 0..<400 {
            var random = SeededGenerator(seed: UInt64(seed))
            let account = Self.account(&random)
            let written = Bool.random(using: &random) ? try sealing.encode(account) : try PlainJSONAccountCodec().encode(account)
            for bytes in [written, try Self.restyled(written, &random).bytes] {
                let expected = try #require(Self.jsonDecoder(bytes), "seed \(seed)")
                #expect(AccountRecordScanner.scan(bytes) == expected, "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    @Test func anythingItAcceptsAfterARandomEditJSONDecoderReadsTheSame() throws {
        let sealing = try EncryptedRecordFixtures.codec(EncryptedRecordFixtures.keyText())
        var accepted = 0
        for seed in 0..<3000 {
            var random = SeededGenerator(seed: UInt64(seed))
            var bytes = try Self.restyled(try sealing.encode(Self.account(&random)), &random).bytes
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                let byte = [
                    UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "1"),
                    UInt8(ascii: "u"), UInt8(ascii: " "), 0x00, 0x80, 0xFF,
                ].randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(byte, at: at)
                default: bytes[at] = byte
                }
            }
            guard let scanned = AccountRecordScanner.scan(bytes) else { continue }
            accepted += 1
            #expect(Self.jsonDecoder(bytes) == scanned, "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
        }
        // Edits inside strings keep records valid often enough for this check to bite.
        #expect(accepted > 100)
    }

    @Test(arguments: [
        ("unknown member", #"{"extra":1,"#), ("repeated member", #"{"uid":"2","#), ("fraction", #"{"version":1.0,"#),
        ("exponent", #"{"version":1e0,"#), ("leading zero", #"{"version":01,"#), ("negative", #"{"version":-1,"#),
        ("string version", #"{"version":"1","#), ("escaped member name", #"{"\u0073cope":"s","#),
        ("lone surrogate", #"{"scope":"\ud800","#), ("bad escape", #"{"scope":"\x41","#), ("null status", #"{"status":null,"#),
        ("number for a string", #"{"scope":7,"#),
        ("envelope with an extra member", #"{"refresh_token":{"ct":"","kid":"k","nonce":"","x":""},"#),
        ("envelope without nonce", #"{"refresh_token":{"ct":"","kid":"k"},"#), ("raw tab", "{\"scope\":\"a\tb\","),
        ("byte order mark", "\u{FEFF}{"), ("array", "[{"),
    ])
    func declinesWhatItDoesNotReadAndTheCodecStillAnswersAsJSONDecoder(_ name: String, prefix: String) throws {
        let record =
            #""access_token":"t","created_at":"2026-11-30T08:00:00Z","provider":"github","status":"active","uid":"1","updated_at":"2026-11-30T08:00:00.5Z","version":1}"#
        let bytes = Array((prefix + record + (prefix.hasPrefix("[") ? "]" : "")).utf8)
        #expect(AccountRecordScanner.scan(bytes) == nil)
        let viaCodec = Outcome { try PlainJSONAccountCodec().decode(bytes, path: Self.path) }
        let viaDecoder = Outcome {
            try PlainJSONAccountCodec.account(
                from: JSONRecord.decode(AccountRecord<String>.self, from: bytes, path: Self.path), path: Self.path)
        }
        #expect(viaCodec == viaDecoder)
    }

    @Test func declinesBrokenDocuments() {
        let valid =
            #"{"access_token":"t","created_at":"2026-11-30T08:00:00Z","provider":"github","status":"active","uid":"1","updated_at":"2026-11-30T08:00:00Z","version":1}"#
        #expect(AccountRecordScanner.scan(Array(valid.utf8)) != nil)
        for broken in [
            "", "{", valid.replacingOccurrences(of: ",\"status\":\"active\"", with: ""), valid + "x", valid + valid,
            valid.replacingOccurrences(of: "}", with: ",}"), String(valid.dropLast(3)),
        ] {
            #expect(AccountRecordScanner.scan(Array(broken.utf8)) == nil, "\(broken)")
        }
        var invalidUTF8 = Array(valid.utf8)
        invalidUTF8[invalidUTF8.firstIndex(of: UInt8(ascii: "g"))!] = 0xC3
        #expect(AccountRecordScanner.scan(invalidUTF8) == nil)
        #expect(Self.jsonDecoder(invalidUTF8) == nil)
    }

    @Test func wordScanFlagsExactlyQuotesBackslashesAndControlCharacters() {
        // Whatever the other seven bytes (plain ASCII, DEL, UTF-8 lead and continuation bytes), a word is flagged exactly
        // when one of its bytes is one the byte loop stops at.
        for fill: UInt8 in [UInt8(ascii: "a"), 0x20, 0x21, 0x5B, 0x5D, 0x7F, 0x80, 0xBF, 0xC3, 0xFF] {
            for position in 0..<8 {
                for byte in UInt8.min...UInt8.max {
                    var word = [UInt8](repeating: fill, count: 8)
                    word[position] = byte
                    let value = word.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                    let expected = byte == 0x22 || byte == 0x5C || byte < 0x20
                    #expect(AccountRecordScanner.holdsStringDelimiter(value) == expected, "byte \(byte) at \(position) among \(fill)")
                }
            }
        }
    }

    @Test func longStringsEndAtTheirQuoteWhereverItFallsInAWord() throws {
        // Member names and values of 0–40 bytes with a quote escape, a control character or a multi-byte character at
        // every place, so the word-at-a-time scan meets each in every position of a word.
        for length in 0...40 {
            for place in 0...length {
                let plain = String(repeating: "x", count: length)
                let index = plain.index(plain.startIndex, offsetBy: place)
                for (insert, accepted) in [("", true), ("\\\"", true), ("\\n", true), ("é", true), ("\u{1}", false), ("\t", false)] {
                    var value = plain
                    value.insert(contentsOf: insert, at: index)
                    let record =
                        #"{"access_token":"t","created_at":"2026-11-30T08:00:00Z","provider":"github","status":"active","uid":""#
                        + value + #"","updated_at":"2026-11-30T08:00:00Z","version":1}"#
                    let scanned = AccountRecordScanner.scan(Array(record.utf8))
                    #expect((scanned != nil) == accepted, "\(record)")
                    if accepted {
                        #expect(scanned?.uid == Self.jsonDecoder(Array(record.utf8))?.uid, "\(record)")
                    }
                }
            }
        }
    }

    @Test func everyMemberNameIsFoundAndNoOther() {
        for key in AccountRecordField.allCases {
            #expect(Array(key.stringValue.utf8).withUnsafeBufferPointer(AccountRecordScanner.key(named:)) == key)
        }
        for other in ["", "ids", "Version", "token", "access_tokens", "created-at", "ct"] {
            #expect(Array(other.utf8).withUnsafeBufferPointer(AccountRecordScanner.key(named:)) == nil)
        }
    }

    @Test func fastPathBuildsWhatTheGeneralPathBuilds() throws {
        let (current, old) = (EncryptedRecordFixtures.keyText(), EncryptedRecordFixtures.keyText())
        let reading = try EncryptedRecordFixtures.codec("k2:\(current),k1:\(old)")
        let sealers = [reading, try EncryptedRecordFixtures.codec("k1:\(old)")]
        var fast = 0
        for seed in 0..<300 {
            var random = SeededGenerator(seed: UInt64(seed))
            let account = Self.account(&random)
            let written = try sealers.randomElement(using: &random)!.encode(account)
            let (bytes, escapesASCII) = try Bool.random(using: &random) ? (written, false) : Self.restyled(written, &random)
            let general = try reading.checkedStoredAccount(bytes, path: Self.path)
            let stored = try reading.storedAccount(bytes, path: Self.path)
            #expect(stored.account == general.account && Self.parts(stored.sealed) == Self.parts(general.sealed), "seed \(seed)")
            #expect(try stored.opened(path: Self.path) == account, "seed \(seed)")
            if let direct = AccountRecordScanner.storedAccount(bytes, keyring: reading.keyring) {
                fast += 1
                #expect(direct.account == general.account && Self.parts(direct.sealed) == Self.parts(general.sealed))
            } else {
                // Only an escape in a member read as bytes (date, status, marker, envelope) sends a sealed record the general way.
                #expect(escapesASCII, "seed \(seed) declined: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(fast > 150)
    }

    @Test func readablePartWithoutDecodingEnvelopesAcceptsExactlyWhatTheFastPathAccepts() throws {
        let (current, old) = (EncryptedRecordFixtures.keyText(), EncryptedRecordFixtures.keyText())
        let reading = try EncryptedRecordFixtures.codec("k2:\(current),k1:\(old)")
        let sealers = [reading, try EncryptedRecordFixtures.codec("k1:\(old)")]
        // The decoding threads' reader, with its own copy of the key ids, answers as the codec does.
        let reader = try #require(reading.sealedRecordReader())
        var (accepted, declined) = (0, 0)
        for seed in 0..<1500 {
            var random = SeededGenerator(seed: UInt64(seed))
            var bytes = try sealers.randomElement(using: &random)!.encode(Self.account(&random))
            // Most records get one symbol of an envelope's nonce or ciphertext changed: to another symbol of the
            // alphabet (pad bits perhaps set), to one outside it, or removed (a length no Base64 has).
            if seed % 4 != 0, let member = [#""nonce""#, #""ct""#].randomElement(using: &random),
                let name = bytes.firstRange(of: Array(member.utf8)),
                let open = bytes[name.upperBound...].firstIndex(of: UInt8(ascii: "\"")),
                let end = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "\"")), end > open + 1
            {
                let at = Int.random(in: (open + 1)..<end, using: &random)
                let choice = Int.random(in: 0..<4, using: &random)
                if choice == 0 { bytes.remove(at: at) } else { bytes[at] = Array("AB_+".utf8)[choice] }
            }
            let fast = AccountRecordScanner.storedAccount(bytes, keyring: reading.keyring)
            let readable = bytes.withUnsafeBytes { reading.readableAccount(reading: $0, reusing: nil) }
            #expect((fast == nil) == (readable == nil), "seed \(seed): \(String(decoding: bytes, as: UTF8.self))")
            let read = bytes.withUnsafeBytes { reader.readableAccount(reading: $0, reusing: nil) }
            #expect((read == nil) == (readable == nil), "seed \(seed)")
            #expect(read?.readable.account == readable?.readable.account, "seed \(seed)")
            #expect(read?.keyIDs.all == readable?.keyIDs.all, "seed \(seed)")
            guard let fast, let readable else {
                declined += 1
                continue
            }
            accepted += 1
            #expect(readable.readable.account == fast.account, "seed \(seed)")
            #expect(readable.keyIDs.all == fast.sealed?.all.map(\.key.id), "seed \(seed)")
        }
        #expect(accepted > 300 && declined > 300, "accepted \(accepted), declined \(declined)")
    }

    @Test func fastPathLeavesPlaintextRecordsUnknownKeysAndBadEnvelopesToTheGeneralPath() throws {
        let codec = try EncryptedRecordFixtures.codec("k1:\(EncryptedRecordFixtures.keyText())")
        let plain = try PlainJSONAccountCodec().encode(.makeFull())
        #expect(AccountRecordScanner.storedAccount(plain, keyring: codec.keyring) == nil)
        #expect(try codec.storedAccount(plain, path: Self.path).sealed == nil)
        let foreign = try EncryptedRecordFixtures.codec("k9:\(EncryptedRecordFixtures.keyText())").encode(.makeFull())
        #expect(AccountRecordScanner.storedAccount(foreign, keyring: codec.keyring) == nil)
        #expect(throws: StoreError.self) { _ = try codec.storedAccount(foreign, path: Self.path) }
        let shortNonce = try EncryptedRecordFixtures.edit(try codec.encode(.makeFull())) { record in
            var envelope = try EncryptedRecordFixtures.envelope(record, "token_secret")
            envelope["nonce"] = "AAAA"
            record["token_secret"] = envelope
        }
        #expect(AccountRecordScanner.storedAccount(shortNonce, keyring: codec.keyring) == nil)
        #expect(throws: StoreError.corrupt(path: Self.path, reason: "token_secret has a malformed nonce")) {
            _ = try codec.storedAccount(shortNonce, path: Self.path)
        }
        let otherID = try EncryptedRecordFixtures.edit(try codec.encode(.makeFull())) { $0["id"] = "twitter:1" }
        #expect(AccountRecordScanner.storedAccount(otherID, keyring: codec.keyring) == nil)
        #expect(
            throws: StoreError.corrupt(path: Self.path, reason: "id \"twitter:1\" does not match provider and uid (\"twitter:783214\")")
        ) {
            _ = try codec.storedAccount(otherID, path: Self.path)
        }
    }
}

/// What a decode gave: the account, or the error's description.
private enum Outcome: Equatable {
    case account(Account)
    case failure(String)

    init(_ decode: () throws -> Account) {
        do {
            self = .account(try decode())
        } catch {
            self = .failure("\(error)")
        }
    }
}
