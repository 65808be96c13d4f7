import Foundation

/// Builds `Set-Cookie` values (RFC 6265 §4.1) with the attributes the broker always wants.
///
/// Paths are the broker's own (`/callback`, `/`), placed under the path of `BROKER_PUBLIC_URL`:
/// behind a proxy that serves the broker at `https://example.com/broker` and strips `/broker`,
/// the browser sees `/broker/callback`, and a cookie on `/callback` would never come back
/// (RFC 6265 §5.1.4 path-match).
struct CookieHeader {
    /// Whether the public URL is https (adds `Secure`).
    let secure: Bool
    /// The public URL's path without a trailing `/`; empty when the broker is served at the root.
    let basePath: String

    /// Cookie attributes for a broker whose browsers reach it at `publicURL`.
    init(publicURL: String) {
        secure = publicURL.lowercased().hasPrefix("https:")
        var path = URLComponents(string: publicURL)?.percentEncodedPath ?? ""
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
    }

    /// A cookie that lives `maxAge` seconds, HttpOnly and SameSite=Lax, on the broker's `path`.
    func set(_ name: String, _ value: String, path: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=\(publicPath(path)); Max-Age=\(maxAge); HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// A header that removes the cookie.
    func clear(_ name: String, path: String) -> String {
        "\(name)=; Path=\(publicPath(path)); Max-Age=0; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// `path` as the browser sees it: under ``basePath`` (the root `/` becomes the base path itself).
    func publicPath(_ path: String) -> String {
        guard !basePath.isEmpty else { return path }
        return path == "/" ? basePath : basePath + path
    }
}
