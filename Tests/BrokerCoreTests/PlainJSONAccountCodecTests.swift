import BrokerCore
import BrokerTestSupport
import Foundation
import Testing

/// The plaintext JSON record format, version 1.
struct PlainJSONAccountCodecTests {
    private let codec = PlainJSONAccountCodec()

    /// A valid record with `fields` replaced; each value is a JSON literal, and `null` removes the field.
    private func record(_ fields: [String: String]) throws -> [UInt8] {
        var base: [String: Any] = [
            "version": 1, "provider": "github", "uid": "1", "access_token": "gho_SENTINEL",
            "created_at": "2026-11-30T08:00:00Z", "updated_at": "2026-11-30T08:00:00Z", "status": "active",
        ]
        for (key, literal) in fields {
            let value = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed)
            base[key] = value is NSNull ? nil : value
        }
        return [UInt8](try JSONSerialization.data(withJSONObject: base))
    }

    @Test func encodesPrettySortedJSONWithVersionAndUTCDates() throws {
        let text = String(decoding: try codec.encode(.makeFull()), as: UTF8.self)
        let keys = [
            "access_token", "created_at", "expires_at", "id", "provider", "refresh_token", "refreshed_at",
            "scope", "screen_name", "status", "token_secret", "token_type", "uid", "updated_at", "version",
        ]
        let positions = keys.map { text.range(of: "\"\($0)\"")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        #expect(text.contains("\"created_at\" : \"2026-11-29T08:00:00Z\""))
        #expect(text.contains("\"expires_at\" : \"2026-11-30T09:00:00.250Z\""))
        #expect(text.contains("\"status\" : \"reauthorization_required\""))
        #expect(text.contains("\"version\" : 1"))
        #expect(text.hasSuffix("}\n"))
    }

    @Test func roundTripsEveryField() throws {
        let full = Account.makeFull()
        let decoded = try codec.decode(codec.encode(full), path: "x.json")
        #expect(decoded.id == full.id)
        #expect(decoded.refreshToken == full.refreshToken)
        #expect(decoded.expiresAt == full.expiresAt)
        #expect(decoded.createdAt == full.createdAt)
        let minimal = Account.make(scope: nil)
        #expect(try codec.decode(codec.encode(minimal), path: "y.json") == minimal)
    }

    @Test func readsFractionalSecondsAndOffsets() throws {
        let account = try codec.decode(
            try record([
                "created_at": "\"2026-11-30T09:00:00.5+01:00\"",
                "expires_at": "\"2026-11-30T08:00:01.123456Z\"",
            ]), path: "x.json")
        #expect(account.createdAt == Date.fixture.addingTimeInterval(0.5))
        #expect(abs(account.expiresAt!.timeIntervalSince(Date.fixture) - 1.123456) < 1e-6)
    }

    @Test func recordWithoutIDIsAccepted() throws {
        let account = try codec.decode(try record([:]), path: "x.json")
        #expect(account.id == "github:1")
    }

    @Test(arguments: [
        ("version", "2", "unsupported record version 2"),
        ("access_token", "null", "missing field \"access_token\""),
        ("uid", "5", "field \"uid\" has the wrong type"),
        ("status", "\"frozen\"", "unknown status \"frozen\""),
        ("created_at", "\"30/11/2026\"", "field \"created_at\" is not an RFC 3339 date-time"),
        ("id", "\"github:2\"", "id \"github:2\" does not match provider and uid (\"github:1\")"),
    ])
    func badRecordIsCorruptWithAReason(field: String, literal: String, reason: String) throws {
        let bytes = try record([field: literal])
        #expect(throws: StoreError.corrupt(path: "/data/accounts/x.json", reason: reason)) {
            _ = try codec.decode(bytes, path: "/data/accounts/x.json")
        }
    }

    @Test func truncatedRecordIsCorrupt() throws {
        let bytes = try codec.encode(.makeFull())
        for length in [0, 1, bytes.count / 3, bytes.count - 3] {
            #expect {
                _ = try codec.decode(Array(bytes.prefix(length)), path: "p")
            } throws: { error in
                guard case .corrupt(let path, let reason) = error as? StoreError else { return false }
                return path == "p" && !reason.contains("SENTINEL")
            }
        }
    }
}
