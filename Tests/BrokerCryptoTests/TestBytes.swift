import BrokerCrypto

/// Decodes a hex literal from a test vector, ignoring spaces, colons and newlines as printed in RFCs.
func bytes(_ hex: String) -> [UInt8] {
    let digits = hex.filter { !" :\n".contains($0) }
    guard let decoded = Hex.decode(digits) else { preconditionFailure("bad hex literal in a test vector: \(hex)") }
    return decoded
}

/// The UTF-8 bytes of a text literal.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
