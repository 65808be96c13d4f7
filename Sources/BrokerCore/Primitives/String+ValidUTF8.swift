extension String {
    /// The text of the UTF-8 `bytes`, or nil when they are not valid UTF-8.
    ///
    /// `String(decoding:)` repairs invalid sequences with U+FFFD, so its result
    /// equals the input bytes exactly when there was nothing to repair. This
    /// avoids the generic `String(validating:as:)`, whose metadata lookups
    /// showed in profiles of start-up with 100,000 records.
    init?(validUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: bytes, as: UTF8.self)
        // ASCII is always valid; only other text needs the comparison.
        guard bytes.allSatisfy({ $0 < 0x80 }) || text.utf8.elementsEqual(bytes) else { return nil }
        self = text
    }
}
