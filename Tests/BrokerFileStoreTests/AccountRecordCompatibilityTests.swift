import BrokerTestSupport
import Foundation
import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// Records written by earlier versions still read the same, and the codecs still write them byte for byte.
struct AccountRecordCompatibilityTests {
    private static let path = "/data/accounts/fixture.json"

    /// The fixtures by name: the account, its plain record and its sealed record with the first nonce used.
    private static let cases: [(name: String, account: Account, plain: [UInt8], sealed: [UInt8], firstNonce: UInt8)] = [
        ("full", AccountRecordFixtures.full, AccountRecordFixtures.plainFull, AccountRecordFixtures.sealedFull, 1),
        ("minimal", AccountRecordFixtures.minimal, AccountRecordFixtures.plainMinimal, AccountRecordFixtures.sealedMinimal, 4),
        ("odd", AccountRecordFixtures.odd, AccountRecordFixtures.plainOdd, AccountRecordFixtures.sealedOdd, 5),
    ]

    /// Every field of `decoded` equals `expected`'s; dates to the millisecond the format keeps, strings byte for byte.
    private static func expectSameFields(_ decoded: Account, _ expected: Account, _ name: String) {
        func bytes(_ text: String?) -> [UInt8]? { text.map { Array($0.utf8) } }
        func close(_ lhs: Date?, _ rhs: Date?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil): true
            case (let lhs?, let rhs?): abs(lhs.timeIntervalSince(rhs)) < 0.001
            default: false
            }
        }
        #expect(bytes(decoded.provider) == bytes(expected.provider), "\(name)")
        #expect(bytes(decoded.uid) == bytes(expected.uid), "\(name)")
        #expect(bytes(decoded.id) == bytes(expected.id), "\(name)")
        #expect(bytes(decoded.accessToken.value) == bytes(expected.accessToken.value), "\(name)")
        #expect(bytes(decoded.tokenType) == bytes(expected.tokenType), "\(name)")
        #expect(bytes(decoded.scope) == bytes(expected.scope), "\(name)")
        #expect(bytes(decoded.refreshToken?.value) == bytes(expected.refreshToken?.value), "\(name)")
        #expect(bytes(decoded.tokenSecret?.value) == bytes(expected.tokenSecret?.value), "\(name)")
        #expect(bytes(decoded.screenName) == bytes(expected.screenName), "\(name)")
        #expect(close(decoded.expiresAt, expected.expiresAt), "\(name)")
        #expect(close(decoded.createdAt, expected.createdAt), "\(name)")
        #expect(close(decoded.updatedAt, expected.updatedAt), "\(name)")
        #expect(close(decoded.refreshedAt, expected.refreshedAt), "\(name)")
        #expect(decoded.status == expected.status, "\(name)")
    }

    @Test func recordsOfTheEarlierVersionHaveNoneOfTheMembersAddedSince() throws {
        let sealing = try AccountRecordFixtures.sealingCodec(firstNonce: 1)
        for fixture in Self.cases {
            for decoded in [
                try PlainJSONAccountCodec().decode(fixture.plain, path: Self.path), try sealing.decode(fixture.sealed, path: Self.path),
            ] {
                #expect(decoded.issuedAt == nil && decoded.refreshTokenExpiresAt == nil, "\(fixture.name)")
                #expect(decoded.idToken == nil && decoded.extras == nil, "\(fixture.name)")
                #expect(decoded.endUser == nil && decoded.tags.isEmpty, "\(fixture.name)")
                #expect(decoded.settings.isEmpty && decoded.metadata == nil, "\(fixture.name)")
                // Their token counts from `refreshed_at`, else `updated_at`, for the margin.
                #expect(decoded.tokenIssuedAt == (fixture.account.refreshedAt ?? fixture.account.updatedAt), "\(fixture.name)")
            }
        }
    }

    /// ``AccountRecordFixtures/full`` with every member added since: lifetimes, an ID token and the answer's other fields.
    private static var withNewMembers: Account {
        var account = AccountRecordFixtures.full
        account.issuedAt = account.updatedAt
        account.refreshTokenExpiresAt = account.updatedAt.addingTimeInterval(15_897_600.5)
        account.idToken = Secret("eyJhbGciOiJub25lIn0.e30.ID-TOKEN-SENTINEL-4")
        account.extras = #"{"instance_url":"https://na1.example.com","team":{"id":"T1"}}"#
        return account
    }

    @Test func theMembersAddedSinceRoundTripAndTheIDTokenIsSealed() throws {
        let account = Self.withNewMembers
        let plain = try PlainJSONAccountCodec().encode(account)
        let plainText = String(decoding: plain, as: UTF8.self)
        for member in ["\"issued_at\"", "\"refresh_token_expires_at\"", "\"id_token\" : \"eyJ", "\"extras\""] {
            #expect(plainText.contains(member), "\(member)")
        }
        #expect(try PlainJSONAccountCodec().decode(plain, path: Self.path) == account)
        let sealing = try AccountRecordFixtures.sealingCodec(firstNonce: 1)
        let sealed = try sealing.encode(account)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("ID-TOKEN-SENTINEL"))
        #expect(String(decoding: sealed, as: UTF8.self).contains("na1.example.com"))
        #expect(try sealing.decode(sealed, path: Self.path) == account)
        // The fast reader and the general one agree, and the envelope is bound to its member.
        let general = try sealing.checkedStoredAccount(sealed, path: Self.path)
        let fast = try #require(AccountRecordScanner.storedAccount(sealed, keyring: sealing.keyring))
        #expect(fast.account == general.account && fast.sealed?.idToken != nil)
        #expect(try fast.opened(path: Self.path) == account)
        // The ID token's envelope swapped with the token secret's fails to open: each is bound to its member.
        let swapped = String(decoding: sealed, as: UTF8.self).replacingOccurrences(of: "\"id_token\"", with: "\"swap\"")
            .replacingOccurrences(of: "\"token_secret\"", with: "\"id_token\"").replacingOccurrences(
                of: "\"swap\"", with: "\"token_secret\"")
        #expect(throws: StoreError.self) { try sealing.decode(Array(swapped.utf8), path: Self.path) }
    }

    @Test func theEndUserAndTagsRoundTripInBothCodecsAndBothReaders() throws {
        var account = Self.withNewMembers
        account.endUser = EndUser(id: "user-42", email: "ada@example.com", name: "Ada \u{e9}\"L\"")
        account.tags = ["plan": "pro", "team.id": "T-1", "empty": ""]
        let plain = try PlainJSONAccountCodec().encode(account)
        let plainText = String(decoding: plain, as: UTF8.self)
        for member in ["\"end_user_id\" : \"user-42\"", "\"end_user_email\"", "\"end_user_name\"", "\"tags\" : {"] {
            #expect(plainText.contains(member), "\(member)")
        }
        #expect(try PlainJSONAccountCodec().decode(plain, path: Self.path) == account)
        // The fast reader reads the new members itself and agrees with JSONDecoder.
        let scanned = try #require(AccountRecordScanner.scan(plain))
        #expect(scanned == (try JSONDecoder().decode(AccountRecord<EncryptedFieldValue>.self, from: Data(plain))))
        #expect(scanned.tags == account.tags && scanned.endUserID == "user-42")
        let sealing = try AccountRecordFixtures.sealingCodec(firstNonce: 1)
        let sealed = try sealing.encode(account)
        #expect(try sealing.decode(sealed, path: Self.path) == account)
        let fast = try #require(AccountRecordScanner.storedAccount(sealed, keyring: sealing.keyring))
        #expect(fast.account.endUser == account.endUser && fast.account.tags == account.tags)
        #expect(try fast.opened(path: Self.path) == account)
        // A repeated tag key or a non-string tag value is JSONDecoder's to judge, never the scanner's.
        let repeated = plainText.replacingOccurrences(of: "\"plan\" : \"pro\"", with: "\"plan\" : \"pro\", \"plan\" : \"x\"")
        #expect(AccountRecordScanner.scan(Array(repeated.utf8)) == nil)
        let numeric = plainText.replacingOccurrences(of: "\"plan\" : \"pro\"", with: "\"plan\" : 1")
        #expect(AccountRecordScanner.scan(Array(numeric.utf8)) == nil)
        #expect(throws: StoreError.self) { try PlainJSONAccountCodec().decode(Array(numeric.utf8), path: Self.path) }
    }

    @Test func settingsMetadataAndTheInvalidStatusRoundTripInBothCodecsAndBothReaders() throws {
        var account = Self.withNewMembers
        account.settings = ["subdomain": "acme", "region": "eu"]
        account.metadata = #"{"crm":{"id":42,"owner":"Ada \u00e9"},"flags":[true,null]}"#
        account.status = .invalid
        let plain = try PlainJSONAccountCodec().encode(account)
        let plainText = String(decoding: plain, as: UTF8.self)
        for member in ["\"settings\" : {", "\"metadata\" : \"{", "\"status\" : \"invalid\""] {
            #expect(plainText.contains(member), "\(member)")
        }
        #expect(try PlainJSONAccountCodec().decode(plain, path: Self.path) == account)
        let scanned = try #require(AccountRecordScanner.scan(plain))
        #expect(scanned == (try JSONDecoder().decode(AccountRecord<EncryptedFieldValue>.self, from: Data(plain))))
        #expect(scanned.settings == account.settings && scanned.metadata == account.metadata)
        let sealing = try AccountRecordFixtures.sealingCodec(firstNonce: 1)
        let sealed = try sealing.encode(account)
        #expect(try sealing.decode(sealed, path: Self.path) == account)
        let fast = try #require(AccountRecordScanner.storedAccount(sealed, keyring: sealing.keyring))
        #expect(fast.account.settings == account.settings && fast.account.metadata == account.metadata)
        #expect(fast.account.status == .invalid)
        #expect(try fast.opened(path: Self.path) == account)
        // The compact form the file store's index keeps gives the same account back.
        #expect(CompactAccount(account).account == account)
    }

    @Test func theCompactFormGivesEachAccountBackFieldForField() {
        var bare = AccountRecordFixtures.minimal
        // An end user and nothing kept out of line.
        bare.endUser = EndUser(id: "u-1")
        for account in Self.cases.map(\.account) + [Self.withNewMembers, bare] {
            let back = CompactAccount(account).account
            #expect(back == account)
            Self.expectSameFields(back, account, account.id)
        }
    }

    @Test func plainRecordsOfTheEarlierVersionDecodeFieldForField() throws {
        for fixture in Self.cases {
            let decoded = try PlainJSONAccountCodec().decode(fixture.plain, path: Self.path)
            Self.expectSameFields(decoded, fixture.account, fixture.name)
        }
    }

    @Test func sealedRecordsOfTheEarlierVersionDecodeFieldForField() throws {
        let codec = try AccountRecordFixtures.sealingCodec(firstNonce: 1)
        for fixture in Self.cases {
            Self.expectSameFields(try codec.decode(fixture.sealed, path: Self.path), fixture.account, fixture.name)
            // A plaintext record of the earlier version reads the same through the sealing codec.
            Self.expectSameFields(try codec.decode(fixture.plain, path: Self.path), fixture.account, fixture.name)
            #expect(try codec.needsRekey(fixture.sealed, path: Self.path) == false)
            #expect(try codec.needsRekey(fixture.plain, path: Self.path) == true)
        }
    }

    @Test func plainRecordsReEncodeByteForByte() throws {
        let codec = PlainJSONAccountCodec()
        for fixture in Self.cases {
            #expect(try codec.encode(fixture.account) == fixture.plain, "\(fixture.name)")
            #expect(try codec.encode(codec.decode(fixture.plain, path: Self.path)) == fixture.plain, "\(fixture.name)")
        }
    }

    @Test func sealedRecordsReEncodeByteForByteWithTheSameNonces() throws {
        for fixture in Self.cases {
            let fresh = try AccountRecordFixtures.sealingCodec(firstNonce: fixture.firstNonce)
            #expect(try fresh.encode(fixture.account) == fixture.sealed, "\(fixture.name)")
            let again = try AccountRecordFixtures.sealingCodec(firstNonce: fixture.firstNonce)
            #expect(try again.encode(again.decode(fixture.sealed, path: Self.path)) == fixture.sealed, "\(fixture.name)")
        }
    }

    @Test(arguments: [false, true])
    func theFileStoreMigratesRecordsOfTheEarlierVersionAndWritesThemBackUnchanged(sealed: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let accounts = directory + "/accounts"
            try FileManager.default.createDirectory(atPath: accounts, withIntermediateDirectories: true)
            func path(_ account: Account) -> String { accounts + "/" + StoreFileName.forAccount(id: account.id) }
            for fixture in Self.cases {
                try Data(sealed ? fixture.sealed : fixture.plain).write(to: URL(fileURLWithPath: path(fixture.account)))
            }
            // Each record as the store keeps it: the earlier file's bytes on one line.
            let lines = Dictionary(
                uniqueKeysWithValues: Self.cases.map { ($0.account.id, JSONLine.compact(sealed ? $0.sealed : $0.plain)) })
            // Nonces count from 1 across the puts below, in the order the sealed fixtures were written.
            let codec: any AccountRecordCodec = sealed ? try AccountRecordFixtures.sealingCodec(firstNonce: 1) : PlainJSONAccountCodec()
            let repository = try JSONFileAccountRepository(directory: directory, codec: codec, openSealedInBackground: false)
            #expect(repository.migratedAtOpen == Self.cases.count)
            for fixture in Self.cases {
                Self.expectSameFields(try #require(try await repository.get(id: fixture.account.accountID)), fixture.account, fixture.name)
                #expect(try AccountStoreFiles.records(in: directory)[fixture.account.id] == lines[fixture.account.id], "\(fixture.name)")
            }
            for fixture in Self.cases { try await repository.put(fixture.account) }
            let written = try AccountStoreFiles.records(in: directory)
            for fixture in Self.cases {
                #expect(written[fixture.account.id] == lines[fixture.account.id], "\(fixture.name)")
            }
        }
    }
}
