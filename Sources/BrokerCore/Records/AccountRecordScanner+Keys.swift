extension AccountRecordScanner {
    /// The record member named by the raw bytes `name`, or nil for a name the record does not have.
    ///
    /// The candidates of the name's length, then a compare per candidate:
    /// start-up looks up 1.5 million names for 100,000 records. The
    /// scanner tests check that every `CodingKeys` name is found here.
    static func key(named name: UnsafeBufferPointer<UInt8>) -> Key? {
        guard name.count < keysByLength.count else { return nil }
        for key in keysByLength[name.count] where matches(name, key.stringValue) { return key }
        return nil
    }

    /// The member names by their length in bytes, built once: an array literal in `key(named:)` would be allocated on every call.
    private static let keysByLength: [[Key]] = {
        var table = [[Key]](repeating: [], count: 25)
        for key in [
            Key.id, .uid, .tags, .scope, .status, .extras, .version, .provider, .idToken, .issuedAt, .encryption, .tokenType,
            .expiresAt, .createdAt, .updatedAt, .screenName, .endUserID, .accessToken, .tokenSecret, .refreshedAt,
            .refreshToken, .endUserName, .endUserEmail, .refreshTokenExpiresAt,
        ] {
            table[key.stringValue.utf8.count].append(key)
        }
        return table
    }()

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
