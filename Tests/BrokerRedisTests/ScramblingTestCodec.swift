import BrokerCore

/// A stand-in for an encrypting codec: a binary header and every JSON byte XOR-ed, so stored bytes are not UTF-8 and hide the tokens.
struct ScramblingTestCodec: AccountRecordCodec {
    static let header: [UInt8] = [0xFF, 0x00, 0xFE]
    private let plain = PlainJSONAccountCodec()

    func encode(_ account: Account) throws(StoreError) -> [UInt8] {
        Self.header + (try plain.encode(account)).map { $0 ^ 0xA5 }
    }

    func decode(_ bytes: [UInt8], path: String) throws(StoreError) -> Account {
        guard bytes.starts(with: Self.header) else { throw .corrupt(path: path, reason: "no scrambled header") }
        return try plain.decode(bytes.dropFirst(Self.header.count).map { $0 ^ 0xA5 }, path: path)
    }
}
