import BrokerCore

// TEMPORARY stand-in until the journal + snapshot store lands: the same signature, writing the snapshot format
// (header line, then one compact record per line, sorted by id) from `list(provider: nil)`. Delete this file then.
extension JSONFileAccountRepository {
    /// Writes every account into a snapshot file at `path` (temporary file, fsync, rename, directory fsync).
    public func backup(to path: String) async throws(StoreError) -> (accounts: Int, bytes: Int) {
        let accounts = try await list(provider: nil)
        var bytes = Array("{\"snapshot\":\"token-broker accounts\",\"version\":1,\"journal\":1,\"accounts\":\(accounts.count)}\n".utf8)
        for account in accounts {
            let record = try record(for: account).bytes
            // The per-file records are pretty-printed: drop the whitespace outside strings.
            var inString = false
            var escaped = false
            for byte in record {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    continue
                }
                bytes.append(byte)
            }
            bytes.append(0x0A)
        }
        let content = bytes
        try await BlockingIO.run { () throws(StoreError) in try DurableFile.write(content, to: path) }
        return (accounts.count, content.count)
    }
}
