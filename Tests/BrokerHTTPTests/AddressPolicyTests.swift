import BrokerHTTP
import Testing

/// The SSRF address policy on addresses inside and just outside each refused range.
struct AddressPolicyTests {
    /// IPv4 addresses at the edges of every refused range, and public neighbours.
    static let ipv4: [(String, Bool)] = [
        ("0.0.0.0", false), ("0.255.255.255", false), ("1.0.0.0", true),
        ("9.255.255.255", true), ("10.0.0.0", false), ("10.255.255.255", false), ("11.0.0.0", true),
        ("100.63.255.255", true), ("100.64.0.0", false), ("100.100.100.200", false), ("100.127.255.255", false),
        ("100.128.0.0", true),
        ("126.255.255.255", true), ("127.0.0.1", false), ("127.255.255.255", false), ("128.0.0.0", true),
        ("169.253.255.255", true), ("169.254.169.254", false), ("169.255.0.0", true),
        ("172.15.255.255", true), ("172.16.0.0", false), ("172.31.255.255", false), ("172.32.0.0", true),
        ("192.167.255.255", true), ("192.168.0.0", false), ("192.168.255.255", false), ("192.169.0.0", true),
        ("192.0.0.0", false), ("192.0.0.255", false), ("192.0.1.0", true),
        ("192.0.2.0", false), ("192.0.2.255", false), ("192.0.3.0", true),
        ("198.51.99.255", true), ("198.51.100.0", false), ("198.51.100.255", false), ("198.51.101.0", true),
        ("203.0.112.255", true), ("203.0.113.0", false), ("203.0.113.255", false), ("203.0.114.0", true),
        ("192.31.195.255", true), ("192.31.196.0", false), ("192.31.196.255", false), ("192.31.197.0", true),
        ("192.52.192.255", true), ("192.52.193.0", false), ("192.52.194.0", true),
        ("192.88.98.255", true), ("192.88.99.0", false), ("192.88.100.0", true),
        ("192.175.47.255", true), ("192.175.48.0", false), ("192.175.49.0", true),
        ("198.17.255.255", true), ("198.18.0.0", false), ("198.19.255.255", false), ("198.20.0.0", true),
        ("223.255.255.255", true), ("224.0.0.0", false), ("239.255.255.255", false),
        ("240.0.0.0", false), ("255.255.255.254", false), ("255.255.255.255", false),
        // Azure's platform address is public (learn.microsoft.com, what-is-ip-address-168-63-129-16).
        ("168.63.129.16", true), ("8.8.8.8", true), ("1.1.1.1", true),
    ]

    /// IPv6 addresses at the edges of every refused range, embedded IPv4 both ways, and public neighbours.
    static let ipv6: [(String, Bool)] = [
        ("::", false), ("::1", false), ("::2", false),
        ("::ffff:127.0.0.1", false), ("::ffff:169.254.169.254", false), ("::ffff:8.8.8.8", true),
        ("::ffff:10.0.0.1", false), ("::7f00:1", false), ("::8.8.8.8", true), ("::a9fe:a9fe", false),
        ("64:ff9b::a9fe:a9fe", false), ("64:ff9b::7f00:1", false), ("64:ff9b::808:808", true),
        ("64:ff9b:1::", false), ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", false), ("64:ff9b:2::", true),
        ("100::", false), ("100::ffff:ffff:ffff:ffff", false), ("100:0:0:1::", false),
        ("100:0:0:1:ffff:ffff:ffff:ffff", false), ("100:0:0:2::", true),
        ("2001::", false), ("2001:0:4136:e378::1", false), ("2001:1ff:ffff::", false), ("2001:200::", true),
        ("2001:db7:ffff:ffff::", true), ("2001:db8::1", false), ("2001:db9::", true),
        ("3ffe:ffff::", true), ("3fff::", false), ("3fff:fff:ffff::", false), ("3fff:1000::", true),
        ("2002:a9fe:a9fe::1", false), ("2002:7f00:1::", false), ("2002:808:808::1", true), ("2003::", true),
        ("2620:4f:7fff::", true), ("2620:4f:8000::1", false), ("2620:4f:8001::", true),
        ("5eff:ffff::", true), ("5f00::1", false), ("5f00:ffff::", false), ("5f01::", true),
        ("fbff:ffff::", true), ("fc00::", false), ("fd00:ec2::254", false), ("fdff:ffff::", false),
        ("fe7f:ffff::", true), ("fe80::1", false), ("febf:ffff::", false), ("fec0::1", false),
        ("feff:ffff::", false), ("ff02::1", false), ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("2606:4700::1", true), ("2a00:1450:4001::200e", true),
    ]

    @Test("IPv4", arguments: ipv4)
    func ipv4Address(literal: String, allowed: Bool) throws {
        let verdict = try #require(AddressPolicy.verdict(literal: literal))
        #expect((verdict == .allowed) == allowed, "\(literal): \(verdict)")
    }

    @Test("IPv6", arguments: ipv6)
    func ipv6Address(literal: String, allowed: Bool) throws {
        let verdict = try #require(AddressPolicy.verdict(literal: literal))
        #expect((verdict == .allowed) == allowed, "\(literal): \(verdict)")
    }

    @Test func aRefusalNamesTheRangeItsAddressIsIn() {
        #expect(AddressPolicy.verdict(literal: "172.16.0.0") == .refused(range: "172.16.0.0/12"))
        #expect(AddressPolicy.verdict(literal: "::1") == .refused(range: "::1/128"))
        #expect(AddressPolicy.verdict(literal: "fd00:ec2::254") == .refused(range: "fc00::/7"))
        #expect(
            AddressPolicy.verdict(literal: "64:ff9b::a9fe:a9fe")
                == .refused(range: "64:ff9b::/96 embedding 169.254.0.0/16"))
    }

    @Test func somethingThatIsNotAnAddressHasNoVerdict() {
        for text in ["", "localhost", "127.1", "1.2.3.4.5", "::g", "[::1]", "fe80::1%eth0"] {
            #expect(AddressPolicy.verdict(literal: text) == nil, "\(text)")
        }
    }

    @Test func allowedHostsAreMatchedWithoutRegardToCase() {
        let policy = AddressPolicy(allowedHosts: ["API.Internal.Example"])
        #expect(policy.exempts(host: "api.internal.example") && policy.exempts(host: "API.INTERNAL.EXAMPLE"))
        #expect(!policy.exempts(host: "internal.example") && !AddressPolicy.publicOnly.exempts(host: "localhost"))
    }

    /// The proxy names the host of its API base as the URL writes it, brackets and all; the client compares the
    /// address alone. Found by scripts/proxy-ssrf: `https://[fd00::5]` with `api_allow_private` was still refused.
    @Test func anIPv6LiteralIsAllowedWithOrWithoutItsBrackets() {
        let policy = AddressPolicy(allowedHosts: ["[FD00::5]", "::1"])
        #expect(policy.exempts(host: "fd00::5") && policy.exempts(host: "::1"))
        #expect(!policy.exempts(host: "fd00::6") && !policy.exempts(host: "[fd00::5]x"))
    }
}
