/// Keyed-hash message authentication codes (RFC 2104) over SHA-1 and SHA-256.
public enum HMAC {
    /// Returns the 20-byte HMAC-SHA1 of `message` under `key` (RFC 2104, tested with RFC 2202).
    public static func sha1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, hash: { SHA1.hash($0) })
    }

    /// Returns the 32-byte HMAC-SHA256 of `message` under `key` (RFC 2104, tested with RFC 4231).
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, hash: { SHA256.hash($0) })
    }

    /// RFC 2104 §2: H(K ^ opad, H(K ^ ipad, text)) for a hash with a 64-byte block.
    private static func authenticate(key: [UInt8], message: [UInt8], hash: ([UInt8]) -> [UInt8]) -> [UInt8] {
        let blockSize = MerkleDamgard.blockByteCount
        // RFC 2104 §2: keys longer than the block are hashed first, then zero-padded to the block.
        var blockKey = key.count > blockSize ? hash(key) : key
        blockKey += [UInt8](repeating: 0, count: blockSize - blockKey.count)
        var inner = [UInt8]()
        inner.reserveCapacity(blockSize + message.count)
        for byte in blockKey { inner.append(byte ^ 0x36) }
        inner += message
        var outer = [UInt8]()
        outer.reserveCapacity(blockSize + 32)
        for byte in blockKey { outer.append(byte ^ 0x5c) }
        outer += hash(inner)
        return hash(outer)
    }
}
