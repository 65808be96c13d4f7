import BrokerHTTP

/// A complete HTML document the broker serves to people, with the security headers every such page carries.
///
/// The page loads nothing but the providers' icons: no script, no font, no
/// stylesheet from elsewhere. Its only style is the inline sheet of
/// `HTMLPage+Style.swift`, allowed by its hash, so the policy can forbid
/// everything else; ``PageAppearance`` holds both, computed at start.
struct HTMLPage {
    /// The document title (the tab's name), as plain text: escaped when rendered.
    var title: String
    /// The content of `<main>`: markup built with `HTMLPage.escape` around every dynamic value.
    var body: String
    /// The stylesheet and policy the page is served with.
    var appearance: PageAppearance = .standard

    /// The header fields of every page, error pages included.
    static func securityHeaders(_ appearance: PageAppearance) -> HTTPHeaders {
        HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Security-Policy", appearance.contentSecurityPolicy),
            // A page may show account names; nothing of it is kept by caches or sent onwards.
            ("Cache-Control", "no-store"),
            ("Referrer-Policy", "no-referrer"),
            ("X-Content-Type-Options", "nosniff"),
            // For browsers that predate CSP's frame-ancestors.
            ("X-Frame-Options", "DENY"),
        ])
    }

    /// The whole document.
    func render() -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>\(Self.escape(title))</title>
        <link rel="icon" href="data:,">
        <style>\(appearance.stylesheet)</style>
        </head>
        <body>
        <main>
        \(body)
        </main>
        </body>
        </html>

        """
    }

    /// The page as a response with `status`; `extra` fields are added after the security headers.
    func response(_ status: HTTPStatus, extra: HTTPHeaders = HTTPHeaders()) -> Response {
        var headers = Self.securityHeaders(appearance)
        for field in extra { headers.add(name: field.name, value: field.value) }
        return Response(status: status, headers: headers, body: Array(render().utf8))
    }
}
