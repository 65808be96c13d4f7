import Foundation

extension ProvidersFileEntry {
    /// The providers-file keys of how a provider is shown to people on the connect page.
    static let displayKeys: Set<String> = ["display_name", "icon_url"]

    /// The longest `display_name`, in characters.
    static let maximumDisplayNameLength = 64
    /// The longest `icon_url`, in bytes: room for a small inline image, not for a photograph in every page.
    static let maximumIconURLBytes = 32 * 1024
    /// The image types a `data:` icon may have; each is inert in an `<img>` (an SVG there runs no script).
    static let iconMediaTypes: Set<String> = ["image/png", "image/gif", "image/jpeg", "image/webp", "image/svg+xml"]

    /// Reads `display_name` and `icon_url` into the configuration; `null` removes a preset's value.
    ///
    /// `display_name` is plain text (1–64 characters, no control characters).
    /// `icon_url` is an absolute `https:` URL (the page's policy then allows
    /// images from its origin) or a `data:image/…` URL of at most 32 KiB.
    func applyDisplay(to c: inout ProviderConfiguration) throws(ProviderConfigurationError) {
        if settings["display_name"] != nil {
            let name = try string("display_name")
            if let name {
                let plain = !name.unicodeScalars.contains {
                    $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
                        || $0.properties.generalCategory == .lineSeparator || $0.properties.generalCategory == .paragraphSeparator
                }
                guard plain, name.count <= Self.maximumDisplayNameLength, !name.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw failure("display_name", "must be 1 to \(Self.maximumDisplayNameLength) characters of plain text")
                }
            }
            c.displayName = name
        }
        if settings["icon_url"] != nil {
            let icon = try string("icon_url")
            if let icon, !Self.isAcceptableIconURL(icon) {
                throw failure(
                    "icon_url",
                    "must be an https URL, or a data:image/… URL (png, gif, jpeg, webp or svg+xml) "
                        + "of at most \(Self.maximumIconURLBytes) bytes")
            }
            c.iconURL = icon
        }
    }

    /// Whether `text` is an absolute `https:` URL with a host and no credentials, or a `data:` URL of an image type;
    /// printable ASCII only, so it needs no encoding in an attribute or a policy.
    static func isAcceptableIconURL(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maximumIconURLBytes,
            text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { return false }
        if text.lowercased().hasPrefix("data:") {
            guard let comma = text.firstIndex(of: ",") else { return false }
            let header = text[text.index(text.startIndex, offsetBy: 5)..<comma].lowercased()
            let type = header.hasSuffix(";base64") ? String(header.dropLast(7)) : header
            return iconMediaTypes.contains(type)
        }
        guard let url = URLComponents(string: text), url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty,
            url.user == nil, url.password == nil
        else { return false }
        return true
    }
}
