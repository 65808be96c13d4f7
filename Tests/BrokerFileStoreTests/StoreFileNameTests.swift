import Testing

@testable import BrokerCore
@testable import BrokerFileStore

/// Record keys map to safe, unique file names.
struct StoreFileNameTests {
    private let ids = [
        "github:1", "github:a/b", "github:a%2Fb", "github:a%252Fb", "x:..", "x:.", "Git:Hub", "git:hub",
        "ü:ñ", "a:b c", "a:b+c", "a:b.tmp.0123456789abcdef", "a:\u{0}",
    ]

    @Test func accountNamesAreSafeAndRoundTrip() throws {
        for id in ids {
            let name = StoreFileName.forAccount(id: id)
            #expect(name.hasSuffix(".json"))
            #expect(name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
            #expect(StoreFileName.accountID(fileName: name) == id)
        }
        #expect(StoreFileName.forAccount(id: "github:a/b") == "github%3Aa%2Fb.json")
    }

    @Test func distinctIDsGetDistinctNames() {
        let names = ids.map(StoreFileName.forAccount(id:))
        #expect(names.count == ids.count)
        #expect(Set(names).count == ids.count)
    }

    @Test func foreignNamesAreNotAccounts() {
        for name in [
            "README.txt", "github%3a1.json", "github%3A.json.tmp.0123456789abcdef", "a b.json", "%ZZ.json", "%3.json",
            // Another spelling of a name this type makes: an escaped unreserved byte, a literal byte that needs one, `+`.
            "github%3A%31.json", "github:1.json", "a%3Ab+c.json", "~abc.json", "%FF%3A1.json",
        ] {
            #expect(StoreFileName.accountID(fileName: name) == nil, "\(name)")
        }
    }

    @Test func nameCheckAgreesWithTheNameItWouldMake() {
        let long = "p:" + String(repeating: "a", count: 200)
        for id in ids + [long] {
            for name in ids.map(StoreFileName.forAccount(id:)) + [
                "github%3a1.json", "github%3A1", "github%3A1.json.json", long + ".json", "",
            ] {
                #expect(StoreFileName.isName(name, forAccount: id) == (StoreFileName.forAccount(id: id) == name), "\(id) \(name)")
            }
        }
        #expect(StoreFileName.isName("github%3A1.json", forAccount: "github:1"))
        #expect(
            StoreFileName.isRecordName("github%3A1.json") && !StoreFileName.isRecordName(".json")
                && !StoreFileName.isRecordName("github%3A1.json.tmp.0123456789abcdef"))
    }

    @Test func anIDTooLongToEscapeGetsADigestName() {
        let fits = "p:" + String(repeating: "a", count: 190)
        #expect(StoreFileName.forAccount(id: fits) == "p%3A" + String(repeating: "a", count: 190) + ".json")
        let long = [
            "p:" + String(repeating: "a", count: 200), "github:" + String(repeating: "/", count: 128),
            "github:" + String(repeating: "\u{E9}", count: 64), "github:" + String(repeating: "\u{6F22}", count: 42),
        ]
        let names = long.map(StoreFileName.forAccount(id:))
        for (id, name) in zip(long, names) {
            #expect(name.hasPrefix("~") && name.hasSuffix(".json") && name.utf8.count == 70, "\(name)")
            #expect(name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
            #expect(StoreFileName.isRecordName(name))
            #expect(StoreFileName.isName(name, forAccount: id))
            #expect(StoreFileName.accountID(fileName: name) == nil)  // the record names the id
        }
        #expect(Set(names).count == long.count)
        // A digest name never stands for a short id, and a short id's name never starts with the marker.
        #expect(!StoreFileName.isName(names[0], forAccount: "github:1"))
        #expect(StoreFileName.forAccount(id: "p:~x") == "p%3A%7Ex.json")
    }

    @Test func composedAndDecomposedSpellingsGetDifferentNames() {
        #expect(StoreFileName.forAccount(id: "p:caf\u{E9}") != StoreFileName.forAccount(id: "p:cafe\u{301}"))
        #expect(!StoreFileName.isName(StoreFileName.forAccount(id: "p:caf\u{E9}"), forAccount: "p:cafe\u{301}"))
    }

    @Test func flowStatesMustBeBase64URLOf16To128() {
        #expect(StoreFileName.forFlow(state: String(repeating: "A", count: 16)) == String(repeating: "A", count: 16) + ".json")
        #expect(StoreFileName.forFlow(state: String(repeating: "_-9z", count: 32)) != nil)
        for bad in [
            String(repeating: "A", count: 15), String(repeating: "A", count: 129), "AAAAAAAAAAAAAAA=", "AAAAAAAA/AAAAAAA",
            "AAAAAAAA.AAAAAAA", "AAAAAAAAAAAAAAAé",
        ] {
            #expect(StoreFileName.forFlow(state: bad) == nil, "\(bad)")
        }
    }
}
