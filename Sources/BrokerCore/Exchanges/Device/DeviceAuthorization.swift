import Foundation

/// A provider's device authorization answer (RFC 8628 §3.2), every field checked where it entered.
public struct DeviceAuthorization: Sendable {
    /// `device_code`: what the broker polls with; never shown to anyone.
    public var deviceCode: Secret
    /// `user_code`: what the person types at ``verificationURI``.
    public var userCode: String
    /// `verification_uri` (Google: `verification_url`): where the person goes.
    public var verificationURI: String
    /// `verification_uri_complete`: the same with the user code in it, when the provider gives one (Microsoft does not).
    public var verificationURIComplete: String?
    /// `expires_in`: seconds both codes live.
    public var expiresIn: Int
    /// `interval`: the least seconds between polls, 5 when absent (§3.2).
    public var interval: Int
}

/// What one poll of a device sign-in found (RFC 8628 §3.5).
enum DevicePoll: Sendable {
    /// `authorization_pending`: the person has not finished; poll again after the interval.
    case pending
    /// `slow_down`: poll again, with the interval 5 seconds longer from now on.
    case slowDown
    /// The tokens and the user they belong to.
    case completed(ExchangeCompletion)
}

/// Checks a device authorization answer: required fields, sizes and ranges, and the verification URI's scheme.
enum DeviceAuthorizationValidator {
    /// The default poll interval in seconds (RFC 8628 §3.2).
    static let defaultInterval = 5
    /// The longest interval accepted, in seconds: a provider asking for more would leave the person waiting.
    static let maximumInterval = 300
    /// The longest code lifetime accepted, in seconds (the providers documented use 15 to 30 minutes).
    static let maximumExpiresIn = 3_600
    /// The longest user code accepted; RFC 8628 §6.1 has them short enough to type.
    static let maximumUserCodeBytes = 64
    /// The longest verification URI accepted.
    static let maximumURIBytes = 2_048

    /// The checked answer in `fields`, or ``BrokerError/upstreamError(step:reason:)`` naming the first bad field.
    static func authorization(from fields: [String: Any], allowHTTP: Bool) throws(BrokerError) -> DeviceAuthorization {
        let step = ProviderStep.deviceAuthorization.rawValue
        func fail(_ reason: String) -> BrokerError { .upstreamError(step: step, reason: reason) }
        guard let deviceCode = ProviderValue.text(fields["device_code"]) else { throw fail("the answer has no device_code") }
        guard ProviderCall.isUsableToken(deviceCode) else { throw fail("device_code is longer than 512 bytes or has control characters") }
        guard let userCode = ProviderValue.text(fields["user_code"]) else { throw fail("the answer has no user_code") }
        guard userCode.utf8.count <= maximumUserCodeBytes, userCode.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else {
            throw fail("user_code is longer than \(maximumUserCodeBytes) bytes or not printable ASCII")
        }
        // Google names it `verification_url` (golang/oauth2 deviceauth.go reads both).
        guard let uri = ProviderValue.text(fields["verification_uri"]) ?? ProviderValue.text(fields["verification_url"]) else {
            throw fail("the answer has no verification_uri")
        }
        try checkURI(uri, field: "verification_uri", allowHTTP: allowHTTP)
        let complete = ProviderValue.text(fields["verification_uri_complete"])
        if let complete { try checkURI(complete, field: "verification_uri_complete", allowHTTP: allowHTTP) }
        guard let rawExpiry = fields["expires_in"], let expiresIn = ProviderValue.integer(rawExpiry) else {
            throw fail("expires_in is missing or not a whole number of seconds")
        }
        guard (1...maximumExpiresIn).contains(expiresIn) else { throw fail("expires_in is not between 1 and \(maximumExpiresIn) seconds") }
        var interval = defaultInterval
        if let raw = fields["interval"], !(raw is NSNull) {
            guard let given = ProviderValue.integer(raw), (1...maximumInterval).contains(given) else {
                throw fail("interval is not between 1 and \(maximumInterval) seconds")
            }
            interval = given
        }
        return DeviceAuthorization(
            deviceCode: Secret(deviceCode), userCode: userCode, verificationURI: uri, verificationURIComplete: complete,
            expiresIn: expiresIn, interval: interval)
    }

    /// Refuses a URI the person could not be sent to safely: not `https:` (nor `http:` where allowed), no host,
    /// userinfo, a fragment, spaces or control characters, or over ``maximumURIBytes``.
    static func checkURI(_ uri: String, field: String, allowHTTP: Bool) throws(BrokerError) {
        let step = ProviderStep.deviceAuthorization.rawValue
        guard uri.utf8.count <= maximumURIBytes, uri.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }),
            let parts = URLComponents(string: uri), let host = parts.host, !host.isEmpty, parts.user == nil, parts.password == nil,
            parts.fragment == nil
        else {
            throw .upstreamError(step: step, reason: "\(field) is not a plain absolute URL")
        }
        let scheme = parts.scheme?.lowercased()
        guard scheme == "https" || (allowHTTP && scheme == "http") else {
            throw .upstreamError(step: step, reason: "\(field) is not https")
        }
    }
}
