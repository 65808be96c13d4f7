import BrokerHTTP

extension HTMLPage {
    /// `text` safe inside element content and inside quoted attribute values (``HTMLText/escape(_:)``).
    static func escape(_ text: String) -> String {
        HTMLText.escape(text)
    }
}
