#if canImport(Glibc)
import Glibc
#endif

/// Which resolved addresses an outbound call may connect to: a guard against server-side request forgery.
///
/// A call that names a host the broker does not control (a provider's API base, a caller's path joined to it) must
/// not reach the broker's own network: loopback, private and link-local ranges, the cloud metadata service
/// (`169.254.169.254`, `fd00:ec2::254`), multicast, documentation and reserved space. The client checks every
/// address a name resolved to, after resolution and before any socket exists, and connects only to those exact
/// addresses (never resolving again), so a name that resolves to a public address first and a private one later
/// (DNS rebinding) cannot slip through.
///
/// The ranges are those of the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890) and the
/// multicast registries, each commented with its RFC below. An IPv6 address that embeds an IPv4 one
/// (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is judged by the IPv4 address it embeds.
///
/// ``allowedHosts`` is the escape hatch: a host named there (lowercased, as in the URL) is connected to whatever it
/// resolves to, for tests and for providers deployed on a private network.
public struct AddressPolicy: Sendable, Hashable {
    /// What the policy says of one address.
    public enum Verdict: Sendable, Equatable {
        /// Globally reachable as far as the registries say: may be connected to.
        case allowed
        /// Inside `range` (for example `"127.0.0.0/8"`), which the policy refuses.
        case refused(range: String)
    }

    /// Host names (lowercase; IPv6 literals without brackets) connected to whatever their addresses.
    public var allowedHosts: Set<String>

    /// Creates a policy that refuses every special-purpose address except for the hosts in `allowedHosts`, each as a
    /// URL writes it: an IPv6 literal may keep its brackets (`[fd00::5]`), which are dropped, as the client's host
    /// has none (RFC 3986 §3.2.2: they delimit the literal, they are not part of it).
    public init(allowedHosts: Set<String> = []) {
        self.allowedHosts = Set(
            allowedHosts.map { host in
                let name = host.lowercased()
                return name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
            })
    }

    /// Refuses every special-purpose address, for every host.
    public static let publicOnly = AddressPolicy()

    /// Whether `host` (as in the URL) is exempt from the address check.
    public func exempts(host: String) -> Bool {
        allowedHosts.contains(host.lowercased())
    }

    // MARK: Classification

    /// The verdict on a numeric IPv4 or IPv6 address written as text; nil when `literal` is neither.
    public static func verdict(literal: String) -> Verdict? {
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            return verdict(ipv4: UInt32(bigEndian: v4.s_addr))
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            return verdict(ipv6: withUnsafeBytes(of: &v6) { Array($0) })
        }
        return nil
    }

    /// The verdict on a resolved socket address (`AF_INET` or `AF_INET6`); any other family is refused.
    static func verdict(_ address: SocketAddress) -> Verdict {
        guard let bytes = address.ipBytes else { return .refused(range: "unknown address family") }
        if bytes.count == 4 {
            return verdict(ipv4: bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        return verdict(ipv6: bytes)
    }

    /// The verdict on an IPv4 address in host byte order.
    public static func verdict(ipv4 address: UInt32) -> Verdict {
        for range in ipv4Refused where range.contains(address) { return .refused(range: range.name) }
        return .allowed
    }

    /// The verdict on the 16 bytes of an IPv6 address (network order); anything not 16 bytes long is refused.
    public static func verdict(ipv6 bytes: [UInt8]) -> Verdict {
        guard bytes.count == 16 else { return .refused(range: "malformed IPv6 address") }
        // The unspecified and loopback addresses lie inside ::/96, whose other addresses are judged as IPv4:
        // they are named first so that `::` and `::1` are refused as what they are.
        for range in ipv6Exact where range.contains(bytes) { return .refused(range: range.name) }
        for range in ipv6Embedding where range.prefix.contains(bytes) {
            let v4 = range.embedded(bytes)
            switch verdict(ipv4: v4) {
            case .allowed: return .allowed
            case .refused(let inner): return .refused(range: "\(range.prefix.name) embedding \(inner)")
            }
        }
        for range in ipv6Refused where range.contains(bytes) { return .refused(range: range.name) }
        return .allowed
    }

    // MARK: Ranges

    struct IPv4Range: Sendable {
        let base: UInt32
        let length: Int
        let name: String

        init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, _ length: Int) {
            base = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
            self.length = length
            name = "\(a).\(b).\(c).\(d)/\(length)"
        }

        func contains(_ address: UInt32) -> Bool {
            let mask: UInt32 = length == 0 ? 0 : ~UInt32(0) << UInt32(32 - length)
            return address & mask == base & mask
        }
    }

    struct IPv6Range: Sendable {
        let base: [UInt8]
        let length: Int
        let name: String

        /// `name` is parsed for the base (it is the registry's own spelling).
        init(_ name: String) {
            let parts = name.split(separator: "/")
            var raw = in6_addr()
            _ = inet_pton(AF_INET6, String(parts[0]), &raw)
            base = withUnsafeBytes(of: &raw) { Array($0) }
            length = Int(parts[1]) ?? 128
            self.name = name
        }

        func contains(_ bytes: [UInt8]) -> Bool {
            var remaining = length
            for index in 0..<16 where remaining > 0 {
                let bits = min(8, remaining)
                let mask: UInt8 = bits == 8 ? 0xFF : ~(UInt8(0xFF) >> UInt8(bits))
                if bytes[index] & mask != base[index] & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    /// An IPv6 prefix whose addresses carry an IPv4 address at byte `offset`.
    struct IPv6Embedding: Sendable {
        let prefix: IPv6Range
        let offset: Int

        func embedded(_ bytes: [UInt8]) -> UInt32 {
            bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
    }

    /// IANA IPv4 Special-Purpose Address Registry and IPv4 Multicast Address Space Registry.
    static let ipv4Refused: [IPv4Range] = [
        IPv4Range(0, 0, 0, 0, 8),  // "This network", RFC 791 §3.2, RFC 1122 §3.2.1.3
        IPv4Range(10, 0, 0, 0, 8),  // Private-Use, RFC 1918
        IPv4Range(100, 64, 0, 0, 10),  // Shared Address Space (CGNAT; Alibaba metadata 100.100.100.200), RFC 6598
        IPv4Range(127, 0, 0, 0, 8),  // Loopback, RFC 1122 §3.2.1.3
        IPv4Range(169, 254, 0, 0, 16),  // Link Local (cloud metadata 169.254.169.254), RFC 3927
        IPv4Range(172, 16, 0, 0, 12),  // Private-Use, RFC 1918
        IPv4Range(192, 168, 0, 0, 16),  // Private-Use, RFC 1918
        IPv4Range(192, 0, 0, 0, 24),  // IETF Protocol Assignments, RFC 6890 §2.1
        IPv4Range(192, 0, 2, 0, 24),  // Documentation (TEST-NET-1), RFC 5737
        IPv4Range(198, 51, 100, 0, 24),  // Documentation (TEST-NET-2), RFC 5737
        IPv4Range(203, 0, 113, 0, 24),  // Documentation (TEST-NET-3), RFC 5737
        IPv4Range(192, 31, 196, 0, 24),  // AS112-v4, RFC 7535
        IPv4Range(192, 52, 193, 0, 24),  // AMT, RFC 7450
        IPv4Range(192, 88, 99, 0, 24),  // Deprecated 6to4 Relay Anycast, RFC 7526
        IPv4Range(192, 175, 48, 0, 24),  // Direct Delegation AS112 Service, RFC 7534
        IPv4Range(198, 18, 0, 0, 15),  // Benchmarking, RFC 2544
        IPv4Range(224, 0, 0, 0, 4),  // Multicast, RFC 5771 (IANA IPv4 Multicast Address Space Registry)
        IPv4Range(240, 0, 0, 0, 4),  // Reserved, RFC 1112 §4
        IPv4Range(255, 255, 255, 255, 32),  // Limited Broadcast, RFC 919 §7, RFC 8190
    ]

    /// IANA IPv6 Special-Purpose Address Registry: the two single addresses inside ::/96.
    static let ipv6Exact: [IPv6Range] = [
        IPv6Range("::/128"),  // Unspecified Address, RFC 4291 §2.5.2
        IPv6Range("::1/128"),  // Loopback Address, RFC 4291 §2.5.3
    ]

    /// IPv6 prefixes judged by the IPv4 address they embed.
    static let ipv6Embedding: [IPv6Embedding] = [
        IPv6Embedding(prefix: IPv6Range("::ffff:0:0/96"), offset: 12),  // IPv4-mapped Address, RFC 4291 §2.5.5.2
        IPv6Embedding(prefix: IPv6Range("::/96"), offset: 12),  // IPv4-Compatible (deprecated), RFC 4291 §2.5.5.1
        IPv6Embedding(prefix: IPv6Range("64:ff9b::/96"), offset: 12),  // IPv4-IPv6 Translation (NAT64), RFC 6052 §2.1
        IPv6Embedding(prefix: IPv6Range("2002::/16"), offset: 2),  // 6to4, RFC 3056 §2
    ]

    /// IANA IPv6 Special-Purpose Address Registry and IPv6 Multicast Address Space Registry, refused whole.
    static let ipv6Refused: [IPv6Range] = [
        IPv6Range("64:ff9b:1::/48"),  // IPv4-IPv6 Translation, local use, RFC 8215
        IPv6Range("100::/64"),  // Discard-Only Address Block, RFC 6666
        IPv6Range("100:0:0:1::/64"),  // Dummy IPv6 Prefix, RFC 9780
        IPv6Range("2001::/23"),  // IETF Protocol Assignments (Teredo 2001::/32, RFC 4380), RFC 2928
        IPv6Range("2001:db8::/32"),  // Documentation, RFC 3849
        IPv6Range("3fff::/20"),  // Documentation, RFC 9637
        IPv6Range("2620:4f:8000::/48"),  // Direct Delegation AS112 Service, RFC 7534
        IPv6Range("5f00::/16"),  // Segment Routing (SRv6) SIDs, RFC 9602
        IPv6Range("fc00::/7"),  // Unique-Local (AWS IMDS fd00:ec2::254), RFC 4193
        IPv6Range("fe80::/10"),  // Link-Local Unicast, RFC 4291 §2.5.6
        IPv6Range("fec0::/10"),  // Site-Local (deprecated), RFC 3879
        IPv6Range("ff00::/8"),  // Multicast, RFC 4291 §2.7
    ]
}

extension SocketAddress {
    /// The address itself: 4 bytes for `AF_INET`, 16 for `AF_INET6` (network order); nil for another family.
    var ipBytes: [UInt8]? {
        withSockaddr { pointer, length -> [UInt8]? in
            let raw = UnsafeRawPointer(pointer)
            switch family {
            case AF_INET where Int(length) >= MemoryLayout<sockaddr_in>.size:
                let offset = MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!
                return Array(UnsafeRawBufferPointer(start: raw + offset, count: 4))
            case AF_INET6 where Int(length) >= MemoryLayout<sockaddr_in6>.size:
                let offset = MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!
                return Array(UnsafeRawBufferPointer(start: raw + offset, count: 16))
            default:
                return nil
            }
        }
    }
}
