import BrokerCrypto
import Foundation

/// How the broker's pages look and what they may load, fixed at start: the title, the accent, the path they live under, the icons' origins.
///
/// Built once from `BROKER_PAGE_TITLE`, `BROKER_PAGE_ACCENT`, the path of
/// `BROKER_PUBLIC_URL` and the providers' `icon_url`s; its stylesheet and
/// Content-Security-Policy are computed then, so a page costs no hashing.
struct PageAppearance: Sendable {
    /// The heading of the connect page and the name every page goes by (plain text, escaped when rendered).
    let title: String
    /// The public URL's path without a trailing `/` (empty at the root), put before every link and form action.
    let basePath: String
    /// The colours of buttons and links.
    let accent: PageAccent
    /// The only style of every page, inlined.
    let stylesheet: String
    /// The policy of every page: nothing but the inline sheet and the icons, forms only to the broker, never framed.
    let contentSecurityPolicy: String

    /// The pages as they look with nothing configured.
    static let standard = PageAppearance()

    /// Computes the stylesheet and the policy; `iconURLs` are the configured icons (`https:` ones widen `img-src` by their origin).
    init(title: String = "token-broker", accent: PageAccent = .standard, basePath: String = "", iconURLs: [String] = []) {
        self.title = title
        self.basePath = basePath
        self.accent = accent
        stylesheet = HTMLPage.stylesheet(accent)
        let styleSource = "'sha256-" + Base64.encode(SHA256.hash(Array(stylesheet.utf8))) + "'"
        // The tab icon is the empty `data:,` URL, so the browser does not fetch /favicon.ico.
        let imageSources = ["data:"] + Self.origins(of: iconURLs)
        contentSecurityPolicy = [
            "default-src 'none'",
            "style-src \(styleSource)",
            "img-src \(imageSources.joined(separator: " "))",
            "form-action 'self'",
            "frame-ancestors 'none'",
            "base-uri 'none'",
        ].joined(separator: "; ")
    }

    /// The connect page's address as a path: `BASE/`.
    var home: String { basePath + "/" }

    /// The distinct `https://host[:port]` origins of the `https:` URLs in `urls`, sorted.
    static func origins(of urls: [String]) -> [String] {
        var origins: Set<String> = []
        for url in urls {
            guard let parts = URLComponents(string: url), parts.scheme?.lowercased() == "https", let host = parts.host, !host.isEmpty
            else { continue }
            origins.insert("https://" + host.lowercased() + (parts.port.map { ":\($0)" } ?? ""))
        }
        return origins.sorted()
    }
}
