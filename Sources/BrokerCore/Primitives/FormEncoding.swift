import BrokerCrypto

/// Builds `application/x-www-form-urlencoded` bodies and query strings for provider calls.
///
/// Names and values are percent-encoded with RFC 3986's unreserved set kept
/// (``PercentEncoding/rfc3986(_:)``), which every form decoder reads back
/// exactly: a space is `%20`, `+` is `%2B`.
enum FormEncoding {
    /// `a=1&b=2` from ordered pairs.
    static func encode(_ pairs: [(String, String)]) -> String {
        PercentEncoding.encodeForm(pairs)
    }

    /// The form body bytes of `pairs`.
    static func body(_ pairs: [(String, String)]) -> [UInt8] {
        Array(encode(pairs).utf8)
    }

    /// `url` with `pairs` appended to its query (`?` or `&` as needed); the configured URL carries no fragment.
    static func url(_ url: String, adding pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return url }
        let separator = url.contains("?") ? (url.hasSuffix("?") || url.hasSuffix("&") ? "" : "&") : "?"
        return url + separator + encode(pairs)
    }
}
