import Foundation

extension AccountRecordScanner {
    /// The record member named by the raw bytes `name`, or nil for a name the record does not have.
    ///
    /// The name's length and a byte or two pick the one candidate, and one
    /// byte compare confirms it, without touching a `String` or an array:
    /// start-up looks up 1.5 million names for 100,000 records. The scanner
    /// tests check that every `CodingKeys` name is found here.
    static func key(named name: UnsafeBufferPointer<UInt8>) -> Key? {
        guard name.count >= 2 else { return nil }
        let first = name[0]
        let candidate: Key
        switch name.count {
        case 2: candidate = .id
        case 3: candidate = .uid
        case 4: candidate = .tags
        case 5: candidate = .scope
        case 6: candidate = first == UInt8(ascii: "s") ? .status : .extras
        case 7: candidate = .version
        case 8:
            switch first {
            case UInt8(ascii: "p"): candidate = .provider
            case UInt8(ascii: "s"): candidate = .settings
            case UInt8(ascii: "m"): candidate = .metadata
            default: candidate = .idToken
            }
        case 9: candidate = .issuedAt
        case 10:
            switch first {
            case UInt8(ascii: "e"): candidate = name[1] == UInt8(ascii: "n") ? .encryption : .expiresAt
            case UInt8(ascii: "t"): candidate = .tokenType
            case UInt8(ascii: "c"): candidate = .createdAt
            default: candidate = .updatedAt
            }
        case 11: candidate = first == UInt8(ascii: "s") ? .screenName : .endUserID
        case 12:
            switch first {
            case UInt8(ascii: "a"): candidate = .accessToken
            case UInt8(ascii: "t"): candidate = .tokenSecret
            default: candidate = .refreshedAt
            }
        case 13: candidate = first == UInt8(ascii: "r") ? .refreshToken : .endUserName
        case 14: candidate = .endUserEmail
        case 24: candidate = .refreshTokenExpiresAt
        default: return nil
        }
        return spells(name, spelling(of: candidate)) ? candidate : nil
    }

    /// The name of `key` on disk (its `stringValue`), as a static string: comparing with it needs no reference counting.
    private static func spelling(of key: Key) -> StaticString {
        switch key {
        case .version: "version"
        case .encryption: "encryption"
        case .id: "id"
        case .provider: "provider"
        case .uid: "uid"
        case .scope: "scope"
        case .status: "status"
        case .accessToken: "access_token"
        case .tokenType: "token_type"
        case .refreshToken: "refresh_token"
        case .tokenSecret: "token_secret"
        case .screenName: "screen_name"
        case .expiresAt: "expires_at"
        case .createdAt: "created_at"
        case .updatedAt: "updated_at"
        case .refreshedAt: "refreshed_at"
        case .issuedAt: "issued_at"
        case .refreshTokenExpiresAt: "refresh_token_expires_at"
        case .idToken: "id_token"
        case .extras: "extras"
        case .endUserID: "end_user_id"
        case .endUserEmail: "end_user_email"
        case .endUserName: "end_user_name"
        case .tags: "tags"
        case .settings: "settings"
        case .metadata: "metadata"
        }
    }

    /// The bit of `key` in the set of members already read.
    static func bit(_ key: Key) -> UInt32 {
        switch key {
        case .version: 1 << 0
        case .encryption: 1 << 1
        case .id: 1 << 2
        case .provider: 1 << 3
        case .uid: 1 << 4
        case .scope: 1 << 5
        case .status: 1 << 6
        case .accessToken: 1 << 7
        case .tokenType: 1 << 8
        case .refreshToken: 1 << 9
        case .tokenSecret: 1 << 10
        case .screenName: 1 << 11
        case .expiresAt: 1 << 12
        case .createdAt: 1 << 13
        case .updatedAt: 1 << 14
        case .refreshedAt: 1 << 15
        case .issuedAt: 1 << 16
        case .refreshTokenExpiresAt: 1 << 17
        case .idToken: 1 << 18
        case .extras: 1 << 19
        case .endUserID: 1 << 20
        case .endUserEmail: 1 << 21
        case .endUserName: 1 << 22
        case .tags: 1 << 23
        case .settings: 1 << 24
        case .metadata: 1 << 25
        }
    }

    /// Whether the raw bytes `name` spell the ASCII `literal`.
    static func spells(_ name: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard name.count == count, let base = name.baseAddress else { return name.count == count }
        return sameBytes(UnsafeRawPointer(base), UnsafeRawPointer(literal.utf8Start), count: count)
    }

    /// Whether the raw bytes `name` spell `expected`.
    static func matches(_ name: UnsafeBufferPointer<UInt8>, _ expected: String) -> Bool {
        // The UTF-8 view of a native string is contiguous: no copy of the string, no allocation.
        expected.utf8.withContiguousStorageIfAvailable { same($0, name) } ?? expected.utf8.elementsEqual(name)
    }

    /// Whether `lhs` and `rhs` hold the same bytes.
    static func same(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count, let left = lhs.baseAddress, let right = rhs.baseAddress else { return lhs.count == rhs.count }
        return sameBytes(UnsafeRawPointer(left), UnsafeRawPointer(right), count: lhs.count)
    }

    /// Whether the `count` bytes at `lhs` and `rhs` are the same: member names, key ids and ids are short, so they are
    /// compared a word at a time (two overlapping loads cover 8–16 bytes), not byte by byte or through a call.
    private static func sameBytes(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, count: Int) -> Bool {
        switch count {
        case 0:
            return true
        case 1..<4:
            for offset in 0..<count
            where lhs.load(fromByteOffset: offset, as: UInt8.self) != rhs.load(fromByteOffset: offset, as: UInt8.self) {
                return false
            }
            return true
        case 4..<8:
            return lhs.loadUnaligned(as: UInt32.self) == rhs.loadUnaligned(as: UInt32.self)
                && lhs.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                    == rhs.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        case 8...16:
            return lhs.loadUnaligned(as: UInt64.self) == rhs.loadUnaligned(as: UInt64.self)
                && lhs.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    == rhs.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        default:
            return memcmp(lhs, rhs, count) == 0
        }
    }
}
