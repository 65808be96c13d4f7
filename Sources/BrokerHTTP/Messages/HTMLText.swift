/// Escaping of text put into HTML the server writes itself.
public enum HTMLText {
    /// `text` safe inside element content and inside double- or single-quoted attribute values.
    ///
    /// HTML Living Standard §13.1.2.3/§13.1.2.6: `&` and `<` end text, quotes end
    /// attribute values; `>` is escaped too so no tag can ever be closed by data.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            // Control characters other than tab and newlines have no business in a page.
            case let c where (c.value < 0x20 && c != "\t" && c != "\n" && c != "\r") || c.value == 0x7F: out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
