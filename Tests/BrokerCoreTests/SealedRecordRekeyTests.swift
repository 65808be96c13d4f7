import BrokerCore
import Foundation
import Testing

/// Which app tokens, client registrations and pending flows `rekey` reseals: plaintext or another key's, never the
/// current key's; and a record sealed with a key the keyring lacks stops it.
struct SealedRecordRekeyTests {
    static let keyA = "a:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).base64EncodedString()
    static let keyB = "b:" + Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }).base64EncodedString()

    @Test func plaintextAndOtherKeysAreResealedAndTheCurrentKeyIsLeft() throws {
        let a = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyA))
        let b = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB))
        let ba = EncryptedAccountCodec(keyring: try EncryptionKeyring.parse(Self.keyB + "," + Self.keyA))
        let token = AppToken(
            provider: "graph", requestedScope: "a b", accessToken: Secret("APP-SENTINEL"), tokenType: "Bearer", scope: nil,
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000), expiresAt: nil)
        let plain = AppTokenCodec.encode(token, sealer: nil)
        let old = AppTokenCodec.encode(token, sealer: a)
        let current = AppTokenCodec.encode(token, sealer: b)
        #expect(SealedRecordRekey.keyIDs(in: old) == ["a"] && SealedRecordRekey.keyIDs(in: plain).isEmpty)
        for stale in [plain, old] {
            let resealed = try #require(try SealedRecordRekey.resealed(stale, kind: .appTokens, key: token.key, path: "t", codec: ba))
            #expect(SealedRecordRekey.keyIDs(in: resealed) == ["b"])
            #expect(try AppTokenCodec.decode(resealed, key: token.key, path: "t", sealer: b) == token)
        }
        #expect(try SealedRecordRekey.resealed(current, kind: .appTokens, key: token.key, path: "t", codec: ba) == nil)
        // Key A is not in the keyring: the record does not open, and the rekey stops at it.
        #expect(throws: StoreError.self) { _ = try SealedRecordRekey.resealed(old, kind: .appTokens, key: token.key, path: "t", codec: b) }
    }
}
