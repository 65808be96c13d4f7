import BrokerTestSupport
import Foundation

/// A browser stand-in: follows the broker → provider → broker redirects by hand, keeping cookies.
struct Browser {
    let jar = CookieJar()
    let brokerPort: Int
    let providerPort: Int

    /// `GET /authorize?...` on the broker.
    func authorize(_ query: String) async -> TestHTTP.Reply? {
        let reply = await TestHTTP.send(port: brokerPort, target: "/authorize?" + query, headers: jar.header)
        if let reply { jar.absorb(reply) }
        return reply
    }

    /// Follows a Location on the provider (its authorize page auto-approves) and returns its redirect target
    /// as a path on the broker (`/callback?...`).
    func visitProvider(_ location: String) async -> String? {
        guard let url = URL(string: location), let query = url.query else { return nil }
        // The authorize URL's own authority goes in `Host`, as a browser sends it (`acme.localhost:PORT` for a per-account host).
        let host = (url.host ?? "127.0.0.1") + (url.port.map { ":\($0)" } ?? "")
        guard let reply = await TestHTTP.send(port: providerPort, target: url.path + "?" + query, headers: [("Host", host)]),
            let back = reply.header("Location"), let backURL = URL(string: back)
        else { return nil }
        return backURL.path + (backURL.query.map { "?" + $0 } ?? "")
    }

    /// `GET` a broker path with this browser's cookies.
    func get(_ target: String, headers: [(String, String)] = []) async -> TestHTTP.Reply? {
        let reply = await TestHTTP.send(port: brokerPort, target: target, headers: jar.header + headers)
        if let reply { jar.absorb(reply) }
        return reply
    }

    /// The whole dance; returns the callback's reply.
    func connect(provider: String, extra: String = "") async -> TestHTTP.Reply? {
        guard let start = await authorize("provider=\(provider)" + extra), start.status == 302,
            let location = start.header("Location"), let callback = await visitProvider(location)
        else { return nil }
        return await get(callback)
    }
}
