import Foundation

/// Printing a flow shows its provider and times, never the state, binding or secrets.
extension PendingFlow: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A one-line summary without the state (a bearer value until used) or secrets.
    public var description: String {
        var parts = [
            "provider: \(provider)",
            "state: <redacted>",
            "createdAt: \(RFC3339Date.format(createdAt))",
            "expiresAt: \(RFC3339Date.format(expiresAt))",
        ]
        if let codeVerifier { parts.append("codeVerifier: \(codeVerifier)") }
        if requestToken != nil { parts.append("requestToken: <redacted>") }
        if let requestTokenSecret { parts.append("requestTokenSecret: \(requestTokenSecret)") }
        if let returnTo { parts.append("returnTo: \(returnTo)") }
        if let nonce { parts.append("nonce: \(nonce)") }
        // The end user's id only: the email and name are personal data and stay out of logs.
        if let endUser { parts.append("endUser: \(endUser.id)") }
        return "PendingFlow(\(parts.joined(separator: ", ")))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the state, binding or request token, so `dump` cannot print them.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "provider": provider,
                "state": "<redacted>",
                "codeVerifier": codeVerifier as Any,
                "requestTokenSecret": requestTokenSecret as Any,
                "returnTo": returnTo as Any,
                "nonce": nonce as Any,
                "endUserID": endUser?.id as Any,
                "createdAt": createdAt,
                "expiresAt": expiresAt,
            ], displayStyle: .struct)
    }
}
