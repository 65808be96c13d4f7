import Foundation

extension ConnectPage {
    /// `publicURL` when the page was opened at another loopback address than it (so sign-ins would land elsewhere), else nil.
    ///
    /// The flow cookie is set for the address the browser used, and the provider
    /// returns to `BROKER_PUBLIC_URL`: opened at `127.0.0.1:8080` with the default
    /// `http://localhost:8080`, every sign-in would end in `invalid_state`. Only
    /// loopback names are compared, because behind a proxy `Host` may be an internal name.
    static func publicURLHint(requestHost: String?, publicURL: String) -> String? {
        guard let requestHost, let seen = authority(ofHost: requestHost),
            let components = URLComponents(string: publicURL), let host = components.host,
            let scheme = components.scheme?.lowercased()
        else { return nil }
        let expected = (host: normalised(host), port: components.port ?? (scheme == "https" ? 443 : 80))
        guard isLoopback(seen.host), isLoopback(expected.host) else { return nil }
        let seenPort = seen.port ?? (scheme == "https" ? 443 : 80)
        return seen.host == expected.host && seenPort == expected.port ? nil : publicURL
    }

    /// RFC 9110 §7.2: `Host = uri-host [ ":" port ]`, with IPv6 literals in brackets.
    static func authority(ofHost value: String) -> (host: String, port: Int?)? {
        let text = value.trimmingCharacters(in: .whitespaces).lowercased()
        guard !text.isEmpty else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return nil }
            return (host, rest.isEmpty ? nil : Int(rest.dropFirst()))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        return (String(parts[0]), parts.count == 2 ? Int(parts[1]) : nil)
    }

    /// A host lowercased, without the brackets of an IPv6 literal.
    static func normalised(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host
    }

    /// `localhost`, `*.localhost`, 127.0.0.0/8 or `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host.hasSuffix(".localhost") || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
