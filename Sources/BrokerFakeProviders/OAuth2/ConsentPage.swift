import BrokerCrypto
import BrokerHTTP

/// The fake provider's sign-in page: who asks, for which made-up account, and Approve or Deny in one form.
///
/// No script and nothing loaded from elsewhere: the only style is the inline sheet,
/// allowed by its hash. The policy has no `form-action`: Chromium applies it to every
/// redirect after the submission, and the client's callback may redirect on to another
/// origin (a flow's `return_to` on a front end), which no list the provider could know
/// would allow. The one form is the page's own, and everything shown is escaped.
struct ConsentPage {
    /// The provider's name as shown, always followed by "not a real account".
    var provider: String
    /// The pending request the answer is for.
    var requestID: String
    /// Where the form posts (the authorize endpoint's path).
    var formAction: String
    /// The client's redirect URI (only its origin is shown and allowed).
    var redirectURI: String
    /// The scope asked for, if any.
    var scope: String?
    /// The account being connected, as shown.
    var user: String
    /// Seconds an access token will live.
    var tokenLifetime: Int

    /// The page as a 200 response with its security headers.
    func response() -> Response {
        let origin = Self.origin(of: redirectURI)
        let scopeLine = scope.map { "<p>It asks for: <code>\(HTMLText.escape($0))</code>.</p>\n" } ?? ""
        let body = """
            <h1>\(HTMLText.escape(provider)) — not a real account</h1>
            <p class="lead">This sign-in page is a stand-in for a real provider. No password is asked, nothing \
            leaves this machine, and the tokens it issues open nothing.</p>
            <p>The application at <code>\(HTMLText.escape(origin ?? redirectURI))</code> asks to connect \
            the account <strong>\(HTMLText.escape(user))</strong>.</p>
            \(scopeLine)<p>Access tokens from this provider expire after \(tokenLifetime) s; the application can \
            renew them with a refresh token, so you can watch a refresh happen.</p>
            <form method="post" action="\(HTMLText.escape(formAction))">
            <input type="hidden" name="request" value="\(HTMLText.escape(requestID))">
            <button type="submit" name="decision" value="approve">Approve</button>
            <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
            </form>
            """
        return Self.page(title: provider + " — not a real account", body: body, status: .ok)
    }

    /// The page shown instead of a redirect when the request cannot be trusted to name where to go (RFC 6749 §4.1.2.1).
    static func refusal(_ reason: String, provider: String) -> Response {
        let body = """
            <h1>\(HTMLText.escape(provider)) — not a real account</h1>
            <p class="error" role="alert">\(HTMLText.escape(reason))</p>
            """
        return page(title: "Sign-in refused", body: body, status: .badRequest)
    }

    /// `scheme://host[:port]` of an absolute URI.
    static func origin(of uri: String) -> String? {
        guard let schemeEnd = uri.range(of: "://") else { return nil }
        let rest = uri[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return String(uri[..<schemeEnd.upperBound]) + authority
    }

    static let stylesheet = """
        body{margin:0;background:#f4f5f7;color:#1b1f24;font:16px/1.5 system-ui,sans-serif}
        main{max-width:36rem;margin:2rem auto;padding:1.5rem;background:#fff;border:3px dashed #a1251b;border-radius:10px}
        h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem;color:#a1251b}
        .lead{color:#3d4550}
        code{font-family:ui-monospace,monospace;background:#e9ecef;padding:.1em .3em;border-radius:4px;overflow-wrap:anywhere}
        form{display:flex;gap:.75rem;margin-top:1.5rem}
        button{min-height:2.75rem;padding:.5rem 1.25rem;border:1px solid #0b57d0;border-radius:8px;background:#0b57d0;\
        color:#fff;font:inherit;font-weight:600;cursor:pointer}
        button.secondary{background:#fff;color:#0b57d0}
        button:focus-visible{outline:3px solid #1b1f24;outline-offset:2px}
        .error{color:#5c130e;background:#fcebea;border:1px solid #e6a29d;border-radius:8px;padding:.75rem 1rem}
        """

    /// The CSP source allowing exactly `stylesheet` (CSP Level 3 §2.3.1).
    static let styleSource = "'sha256-" + Base64.encode(SHA256.hash(Array(stylesheet.utf8))) + "'"

    /// A complete document with the policy: nothing but the inline sheet (no `form-action`: see the type's comment).
    private static func page(title: String, body: String, status: HTTPStatus) -> Response {
        let policy = "default-src 'none'; style-src \(styleSource); img-src data:; frame-ancestors 'none'; base-uri 'none'"
        let html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(HTMLText.escape(title))</title>
            <link rel="icon" href="data:,">
            <style>\(stylesheet)</style>
            </head>
            <body>
            <main>
            \(body)
            </main>
            </body>
            </html>

            """
        return Response(
            status: status,
            headers: HTTPHeaders([
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Security-Policy", policy),
                ("Cache-Control", "no-store"),
                ("Referrer-Policy", "no-referrer"),
                ("X-Content-Type-Options", "nosniff"),
                ("X-Frame-Options", "DENY"),
            ]), body: Array(html.utf8))
    }
}
