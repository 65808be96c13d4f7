/// Builds `Set-Cookie` values (RFC 6265 §4.1) with the attributes the broker always wants.
struct CookieHeader {
    /// Whether the public URL is https (adds `Secure`).
    let secure: Bool

    /// A cookie that lives `maxAge` seconds, HttpOnly and SameSite=Lax, on `path`.
    func set(_ name: String, _ value: String, path: String, maxAge: Int) -> String {
        "\(name)=\(value); Path=\(path); Max-Age=\(maxAge); HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }

    /// A header that removes the cookie.
    func clear(_ name: String, path: String) -> String {
        "\(name)=; Path=\(path); Max-Age=0; HttpOnly; SameSite=Lax" + (secure ? "; Secure" : "")
    }
}
