import BrokerCrypto
import Foundation

/// The `Broker-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the webhook secret.
///
/// The scheme Stripe documents: the timestamp is signed with the body, so a
/// receiver that rejects old timestamps (five minutes is the advice) also
/// rejects a captured request replayed later.
public enum WebhookSignature {
    /// The header's name.
    public static let headerName = "Broker-Signature"

    /// The header value for `body` sent at `timestamp` (whole seconds since 1970).
    public static func header(secret: [UInt8], timestamp: Int, body: [UInt8]) -> String {
        "t=\(timestamp),v1=" + signature(secret: secret, timestamp: timestamp, body: body)
    }

    /// The lowercase hex HMAC-SHA256 of `"<timestamp>.<body>"` under `secret`.
    public static func signature(secret: [UInt8], timestamp: Int, body: [UInt8]) -> String {
        Hex.encode(HMAC.sha256(key: secret, message: Array("\(timestamp).".utf8) + body))
    }

    /// Whether `header` carries a `v1` signature of `body` under `secret` with a `t` no more than `tolerance` seconds from `now`.
    ///
    /// What a receiver does; the broker uses it only in tests and examples.
    /// Signatures are compared in constant time.
    public static func verify(header: String, secret: [UInt8], body: [UInt8], now: Date, tolerance: TimeInterval = 300) -> Bool {
        var timestamp: Int?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            switch pair[0] {
            case "t": timestamp = Int(pair[1])
            case "v1": signatures.append(String(pair[1]))
            default: continue
            }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let expected = signature(secret: secret, timestamp: timestamp, body: body)
        return signatures.contains { ConstantTime.equals($0, expected) }
    }
}
