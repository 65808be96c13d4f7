import Foundation
import Testing

@testable import BrokerCore

/// Device sign-in (RFC 8628) in the core: the providers-file keys, the presets, and the checks on a device answer.
struct DeviceAuthorizationTests {
    private func load(_ settings: String, kind: String = "oauth2", environment: [String: String] = [:]) throws -> ProviderRegistry {
        let file =
            #"{"providers": {"acme": {"kind": "\#(kind)", "client_id": "acme", "client_secret": "s", "#
            + #""authorize_url": "https://acme.example/authorize", "token_url": "https://acme.example/token", "#
            + #""user_url": "https://acme.example/me"\#(settings.isEmpty ? "" : ", " + settings)}}}"#
        return try ProviderRegistry.load(environment: environment, providersFile: Array(file.utf8))
    }

    @Test func theProvidersFileKeysReachTheConfiguration() throws {
        let set = try #require(
            try load(#""device_authorization_url": "https://acme.example/device", "device_allow_http": true"#).provider(named: "acme"))
        #expect(set.deviceAuthorizationURL == "https://acme.example/device" && set.deviceAllowHTTP)
        let unset = try #require(try load("").provider(named: "acme"))
        #expect(unset.deviceAuthorizationURL == nil && !unset.deviceAllowHTTP)
        #expect(throws: ProviderConfigurationError.self) { _ = try load(#""device_allow_http": "yes""#) }
    }

    @Test func theGitHubGoogleAndMicrosoftPresetsHaveTheirDocumentedEndpoints() throws {
        #expect(ProviderPresets.preset(named: "github", environment: [:])?.deviceAuthorizationURL == "https://github.com/login/device/code")
        #expect(
            ProviderPresets.preset(named: "google", environment: [:])?.deviceAuthorizationURL == "https://oauth2.googleapis.com/device/code"
        )
        // The tenant fills the device endpoint as it fills the token endpoint, so both go to one tenant.
        let common = ProviderPresets.preset(named: "microsoft", environment: [:])
        #expect(common?.deviceAuthorizationURL == "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode")
        let tenant = ProviderPresets.preset(named: "microsoft", environment: ["MICROSOFT_TENANT": "contoso.onmicrosoft.com"])
        #expect(tenant?.deviceAuthorizationURL == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/devicecode")
        #expect(tenant?.tokenURL == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")
    }

    static func good() -> [String: Any] {
        [
            "device_code": "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS", "user_code": "WDJB-MJHT",
            "verification_uri": "https://example.com/device", "expires_in": 1800, "interval": 5,
        ]
    }

    private func check(_ change: (inout [String: Any]) -> Void, allowHTTP: Bool = false) throws(BrokerError) -> DeviceAuthorization {
        var fields = Self.good()
        change(&fields)
        return try DeviceAuthorizationValidator.authorization(from: fields, allowHTTP: allowHTTP)
    }

    @Test func aGoodAnswerIsReadWithItsDefaultsAndGooglesSpelling() throws {
        let read = try check { _ in }
        #expect(read.userCode == "WDJB-MJHT" && read.expiresIn == 1800 && read.interval == 5 && read.verificationURIComplete == nil)
        // RFC 8628 §3.2: no interval means 5 seconds; numbers may come as strings (form-encoded answers).
        let defaults = try check {
            $0["interval"] = nil
            $0["expires_in"] = "900"
        }
        #expect(defaults.interval == 5 && defaults.expiresIn == 900)
        // Google writes verification_url.
        let google = try check {
            $0["verification_uri"] = nil
            $0["verification_url"] = "https://www.google.com/device"
        }
        #expect(google.verificationURI == "https://www.google.com/device")
        #expect(try check({ $0["verification_uri"] = "http://127.0.0.1:8080/device" }, allowHTTP: true).verificationURI.hasPrefix("http:"))
    }

    @Test(arguments: [
        ("device_code", "no device_code"), ("user_code", "no user_code"), ("verification_uri", "no verification_uri"),
        ("expires_in", "expires_in"),
    ])
    func aMissingRequiredFieldIsRefusedNamingIt(_ field: String, _ reason: String) {
        do {
            _ = try check { $0[field] = nil }
            Issue.record("accepted an answer without \(field)")
        } catch {
            guard case .upstreamError(let step, let message) = error else { return #expect(Bool(false)) }
            #expect(step == "device_authorization" && message.contains(reason))
        }
    }

    /// Each case is a field and its value as JSON text.
    @Test(arguments: [
        ("interval", "0"), ("interval", "100000"), ("interval", "-5"), ("expires_in", "0"), ("expires_in", "86400000"),
        ("interval", #""fast""#), ("verification_uri", #""http://example.com/device""#),
        ("verification_uri", #""javascript:alert(1)""#), ("verification_uri", #""https://user@example.com/device""#),
        ("verification_uri_complete", #""http://example.com/d?c=1""#), ("user_code", "\"" + String(repeating: "A", count: 65) + "\""),
        ("user_code", #""AB CD""#), ("device_code", "\"" + String(repeating: "d", count: 513) + "\""), ("device_code", #""a\u0001b""#),
        ("verification_uri", "\"https://example.com/" + String(repeating: "a", count: 2048) + "\""),
    ])
    func anOutOfRangeOrUnsafeValueIsRefusedNamingTheField(_ field: String, _ json: String) throws {
        let value = try #require((try JSONSerialization.jsonObject(with: Data(("[" + json + "]").utf8)) as? [Any])?.first)
        do {
            _ = try check { $0[field] = value }
            Issue.record("accepted \(field)")
        } catch {
            guard case .upstreamError(_, let message) = error else { return #expect(Bool(false)) }
            #expect(message.contains(field))
        }
    }
}
