extension AccountRecordScanner {
    /// The record member named by the raw bytes `name`, or nil for a name the record does not have.
    ///
    /// A switch on the length and a compare per candidate, with no table to
    /// search: start-up looks up 1.5 million names for 100,000 records. The
    /// scanner tests check that every `CodingKeys` name is found here.
    static func key(named name: UnsafeBufferPointer<UInt8>) -> Key? {
        let candidates: [Key]
        switch name.count {
        case 2: candidates = [.id]
        case 3: candidates = [.uid]
        case 4: candidates = [.tags]
        case 5: candidates = [.scope]
        case 6: candidates = [.status, .extras]
        case 7: candidates = [.version]
        case 8: candidates = [.provider, .idToken]
        case 9: candidates = [.issuedAt]
        case 10: candidates = [.encryption, .tokenType, .expiresAt, .createdAt, .updatedAt]
        case 11: candidates = [.screenName, .endUserID]
        case 12: candidates = [.accessToken, .tokenSecret, .refreshedAt]
        case 13: candidates = [.refreshToken, .endUserName]
        case 14: candidates = [.endUserEmail]
        case 24: candidates = [.refreshTokenExpiresAt]
        default: return nil
        }
        return candidates.first { matches(name, $0.stringValue) }
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
        }
    }

    /// Whether the raw bytes `name` spell `expected`.
    static func matches(_ name: UnsafeBufferPointer<UInt8>, _ expected: String) -> Bool {
        var expected = expected
        return expected.withUTF8 { wanted in
            // Member names are short: a plain loop costs no more than a call to memcmp.
            wanted.elementsEqual(name)
        }
    }
}
