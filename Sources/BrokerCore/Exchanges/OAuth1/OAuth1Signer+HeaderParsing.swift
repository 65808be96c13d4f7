import BrokerCrypto

extension OAuth1Signer {
    /// Parses an `Authorization: OAuth k="v", …` value into decoded pairs, leaving out `realm`; nil if malformed.
    ///
    /// Meant for fake providers in tests and for checking what the signer wrote. RFC 5849 §3.5.1:
    /// the scheme is case-insensitive, pairs are separated by commas with optional whitespace,
    /// every value is quoted, and names and values are percent-decoded (`+` stays `+`).
    public static func parseAuthorizationHeader(_ value: String) -> [(String, String)]? {
        var scanner = OAuth1HeaderScanner(Array(value.utf8))
        scanner.skipWhitespace()
        guard scanner.readToken().lowercased() == "oauth" else { return nil }
        guard scanner.atEnd || scanner.skipWhitespace() else { return nil }
        var pairs: [(String, String)] = []
        while true {
            // RFC 9110 §5.6.1: empty list elements are allowed and ignored.
            while scanner.skipWhitespace() || scanner.skip(",") {}
            if scanner.atEnd { return pairs }
            let name = scanner.readToken()
            guard !name.isEmpty else { return nil }
            scanner.skipWhitespace()
            guard scanner.skip("=") else { return nil }
            scanner.skipWhitespace()
            guard let quoted = scanner.readQuotedString() else { return nil }
            scanner.skipWhitespace()
            guard scanner.atEnd || scanner.skip(",") else { return nil }
            // RFC 5849 §3.4.1.3.1: realm is not a protocol parameter.
            if name.lowercased() == "realm" { continue }
            guard let decodedName = PercentEncoding.percentDecode(name, plusIsSpace: false),
                let decodedValue = PercentEncoding.percentDecode(quoted, plusIsSpace: false)
            else { return nil }
            pairs.append((decodedName, decodedValue))
        }
    }
}
